;;; cloudnotes-sync.el --- Sync commands of CloudNotes  -*- lexical-binding: t; -*-

;; This file is not part of GNU Emacs.

;;; Commentary:

;; Sync: where it stands, a sync now, the remote, and the conflict copies
;; that syncs made, shown beside their memos.

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'cloudnotes)
(require 'cloudnotes-list)
(require 'cloudnotes-commands)

(declare-function cloudnotes-detail--save-sync "cloudnotes-detail-save" (&optional timeout))

(defvar cloudnotes-sync--last-status nil "The last SyncStatus received.")
(defvar cloudnotes-sync--reported nil "The last sync error shown.")

(defconst cloudnotes-sync--conflicts-buffer "*CloudNotes conflicts*")

(cloudnotes--on "sync/didChange"
                (lambda (p)
                  (let* ((status (plist-get p :status))
                         (state (plist-get status :state)))
                    (setq cloudnotes-list--sync-state state)
                    (cond ((equal state "idle") (setq cloudnotes-sync--reported nil))
                          ;; Say a failure once, not at every retry.
                          ((and (equal state "failed")
                                (not (equal (plist-get status :lastError) cloudnotes-sync--reported)))
                           (setq cloudnotes-sync--reported (plist-get status :lastError))
                           (cloudnotes--error "sync failed: %s" cloudnotes-sync--reported)))
                    (force-mode-line-update t))))

;;; Sync

(defun cloudnotes-sync--status-text (status)
  "One line telling where STATUS (a SyncStatus) stands."
  (let ((conflicts (length (plist-get status :conflicts))))
    (string-join
     (delq nil
           (list (format "sync %s" (plist-get status :state))
                 (when (plist-get status :remote) (format "with %s" (plist-get status :remote)))
                 (when (plist-get status :lastSync) (format "last synced %s" (plist-get status :lastSync)))
                 (format "%s to publish" (cloudnotes-commands--plural
                                          (or (plist-get status :pendingChanges) 0) "change"))
                 (when (plist-get status :lastError) (format "last error: %s" (plist-get status :lastError)))
                 (when (> conflicts 0)
                   (format "%s (C shows them)" (cloudnotes-commands--plural conflicts "conflict")))))
     ", ")))

(defun cloudnotes-sync-status ()
  "Tell where sync stands: the remote, the last sync, the changes and conflicts."
  (interactive)
  (cloudnotes--check)
  (cloudnotes--request "sync/status" nil
                       :then (lambda (status)
                               (setq cloudnotes-sync--last-status status)
                               (cloudnotes--message "%s" (cloudnotes-sync--status-text status)))))

(defun cloudnotes-sync-now ()
  "Sync now with the remote."
  (interactive)
  (cloudnotes--check)
  (cloudnotes-detail--save-sync)
  (cloudnotes--request "sync/now" (list :workDoneToken (cloudnotes-commands--token "sync"))
                       :timeout nil
                       :then (lambda (result)
                               (setq cloudnotes-sync--last-status (plist-get result :status))
                               (cloudnotes--message
                                "synced: %s changed here, %s published, %s"
                                (cloudnotes-commands--plural (plist-get result :changedMemos) "memo")
                                (cloudnotes-commands--plural (plist-get result :published) "change")
                                (cloudnotes-commands--plural (plist-get result :conflicts) "conflict")))
                       :else (lambda (err)
                               (if (equal (plist-get (plist-get err :data) :reason) "notConfigured")
                                   (cloudnotes--error "sync has no remote: M-x cloudnotes-sync-configure sets one")
                                 (cloudnotes--error "%s" (cloudnotes--error-text err))))))

(defun cloudnotes-sync-configure (remote)
  "Sync with REMOTE: file:///folder or an http(s) WebDAV URL; empty stops syncing."
  (interactive (list (read-string "Remote (file:///folder or https://…; empty: stop syncing): ")))
  (cloudnotes--check)
  (cloudnotes--request "sync/configure"
                       (list :remote (if (string-empty-p (string-trim remote)) nil (string-trim remote)))
                       :then (lambda (status)
                               (setq cloudnotes-sync--last-status status)
                               (cloudnotes--message "%s" (cloudnotes-sync--status-text status)))))

;;; Conflict copies

(defvar cloudnotes-conflicts-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "TAB") #'forward-button)
    (define-key map (kbd "<backtab>") #'backward-button)
    (define-key map "g" #'cloudnotes-conflicts)
    map)
  "Keys of the conflicts buffer.")

(define-derived-mode cloudnotes-conflicts-mode special-mode "CloudNotes Conflicts"
  "The conflict copies that syncs made.

\\{cloudnotes-conflicts-mode-map}"
  (setq truncate-lines nil))

(defun cloudnotes-conflicts ()
  "Show the memos that sync kept with a conflict copy, and their copies."
  (interactive)
  (cloudnotes--check)
  (cloudnotes--request
   "sync/status" nil
   :then (lambda (status)
           (setq cloudnotes-sync--last-status status)
           (let ((conflicts (append (plist-get status :conflicts) nil)))
             (if (null conflicts)
                 (progn (cloudnotes--message "no sync conflicts")
                        (cloudnotes-sync--draw-conflicts nil nil))
               (cloudnotes-sync--fetch-conflicts conflicts))))))

(defun cloudnotes-sync--fetch-conflicts (conflicts)
  "Fetch the texts of CONFLICTS with `memo/share' (it changes nothing), then draw."
  (let* ((ids (cl-loop for c in conflicts collect (plist-get c :memo) collect (plist-get c :copy)))
         (texts (make-hash-table :test #'equal))
         (left (length ids)))
    (dolist (id ids)
      (let ((done (lambda (result)
                    (puthash id result texts)
                    (when (zerop (cl-decf left))
                      (cloudnotes-sync--draw-conflicts conflicts texts)))))
        (cloudnotes--request "memo/share" (list :id id :format "text")
                             :then done :else (lambda (_err) (funcall done nil)))))))

(defun cloudnotes-sync--insert-memo (label id shared)
  "Insert LABEL and the memo ID as SHARED (a share result, or nil if gone)."
  (insert (format "   %s: " label))
  (if (not shared)
      (insert "(deleted)\n")
    (insert (propertize (format "“%s”" (plist-get shared :title)) 'face 'bold) "  ")
    (insert-text-button "[Show]" 'follow-link t
                        'action (lambda (_) (cloudnotes--request "memo/select" (list :id id)
                                                                 :then (lambda (_) (cloudnotes-goto-detail)))))
    (insert "\n")
    (dolist (line (split-string (plist-get shared :text) "\n"))
      (insert "   │ " line "\n"))))

(defun cloudnotes-sync--draw-conflicts (conflicts texts)
  "Show CONFLICTS, with the memo texts in TEXTS (id -> share result)."
  (with-current-buffer (get-buffer-create cloudnotes-sync--conflicts-buffer)
    (let ((inhibit-read-only t) (n 0))
      (cloudnotes-conflicts-mode)
      (erase-buffer)
      (insert (if conflicts
                  (format "%s.  Each memo kept one text; the other is in its copy.\nMerge them by hand, then delete the copy: that resolves the conflict.\n\n"
                          (cloudnotes-commands--plural (length conflicts) "sync conflict"))
                "No sync conflicts.\n"))
      (dolist (conflict conflicts)
        (let ((memo (plist-get conflict :memo)) (copy (plist-get conflict :copy)))
          (insert (format "%d.\n" (cl-incf n)))
          (cloudnotes-sync--insert-memo "Memo" memo (gethash memo texts))
          (cloudnotes-sync--insert-memo "Copy" copy (gethash copy texts))
          (when (gethash copy texts)
            (insert "   ")
            (insert-text-button "[Delete the copy]" 'follow-link t
                                'action (lambda (_)
                                          (when (y-or-n-p "Delete the conflict copy? ")
                                            (cloudnotes--request "memo/delete" (list :id copy)
                                                                 :then (lambda (_) (cloudnotes-conflicts))))))
            (insert "\n"))
          (insert "\n")))
      (goto-char (point-min)))
    (display-buffer (current-buffer))))

(provide 'cloudnotes-sync)
;;; cloudnotes-sync.el ends here
