;;; cloudnotes-detail-save.el --- Saving the memo pane of CloudNotes  -*- lexical-binding: t; -*-

;; This file is not part of GNU Emacs.

;;; Commentary:

;; The selected memo's text is saved as you type; this file holds the
;; state of the memo shown and of its saves, and how they are sent
;; (cloudnotes-detail.el shows the memo and has the mode and commands).
;;
;; `before-change-functions' keeps the text a change replaces, and
;; `after-change-functions' turns the change into a `memo/edit' edit: the
;; UTF-8 byte offsets of the replaced text (from `position-bytes' of the
;; change's start, and the bytes of the old text) and the new text.  The
;; edits of a burst are kept in order (typing is merged into one edit) and
;; sent after a pause of `cloudnotes-debounce' seconds (at most
;; `cloudnotes-save-max-delay' after the first), one request at a time,
;; each against the version (`baseVersion') the previous answer brought.  A
;; change that cannot be told as edits (hooks that disagree, more than 1000
;; edits, an answer whose length is not ours) sends the whole text with
;; `memo/update' instead.
;;
;; Nothing typed is lost: the buffer keeps the text until the server took
;; it.  When the server refuses a save because the memo changed elsewhere
;; (-33002) or was deleted (-33001), the text goes to the kill ring and the
;; *CloudNotes conflict* buffer before the server's text is shown.

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'cloudnotes)

(declare-function cloudnotes-detail-mode "cloudnotes-detail" ())
(declare-function cloudnotes-detail--show-text "cloudnotes-detail" (text editable &optional keep-point))

(defvar cloudnotes-detail--id nil "The id of the memo shown, or nil.")
(defvar cloudnotes-detail--title "" "The title of the memo shown.")
(defvar cloudnotes-detail--versions (make-hash-table :test #'equal)
  "Memo id -> the version its next save is based on.")
(defvar cloudnotes-detail--edits nil
  "Changes not sent yet, newest first: (START END TEXT), START and END in bytes.")
(defvar cloudnotes-detail--whole nil "Non-nil: send the whole text, not edits.")
(defvar cloudnotes-detail--dirty nil "Non-nil: the buffer has changes not sent yet.")
(defvar cloudnotes-detail--dirty-since nil "When the oldest change not sent was made.")
(defvar cloudnotes-detail--before nil "(BEG END OLD-TEXT) of the change under way.")
(defvar cloudnotes-detail--inflight nil "The save on its way: a plist (:id :text :size :edit).")
(defvar cloudnotes-detail--queue nil
  "Texts of memos no longer shown, to send in order: plists (:id :text).")
(defvar cloudnotes-detail--timer nil "The debounce timer.")
(defvar cloudnotes-detail--applying nil "Non-nil while the server's text is put in the buffer.")
(defvar cloudnotes-detail--gone nil "Non-nil: the memo shown was deleted elsewhere.")
(defvar cloudnotes-detail--failed nil "Non-nil: the last save failed; retry when asked.")

(defconst cloudnotes-detail--buffer-name "*CloudNotes memo*")
(defconst cloudnotes-detail--conflict-buffer "*CloudNotes conflict*")

(defun cloudnotes-detail--buffer ()
  "The detail buffer, made if needed."
  (cloudnotes--pane-buffer cloudnotes-detail--buffer-name #'cloudnotes-detail-mode))

(defun cloudnotes-detail--text ()
  "The whole text of the detail buffer."
  (with-current-buffer (cloudnotes-detail--buffer)
    (save-restriction (widen) (buffer-substring-no-properties (point-min) (point-max)))))

(defun cloudnotes-detail--reset-state ()
  "Forget the memo shown and every save."
  (cloudnotes-detail--drop-changes)
  (setq cloudnotes-detail--id nil cloudnotes-detail--title "" cloudnotes-detail--before nil
        cloudnotes-detail--inflight nil cloudnotes-detail--queue nil
        cloudnotes-detail--gone nil cloudnotes-detail--failed nil)
  (clrhash cloudnotes-detail--versions))

;;; Changes in the buffer -> edits

(defun cloudnotes-detail--before-change (beg end)
  "Keep the text from BEG to END that a change is about to replace."
  (unless cloudnotes-detail--applying
    (setq cloudnotes-detail--before (list beg end (buffer-substring-no-properties beg end)))))

(defun cloudnotes-detail--after-change (beg end old-len)
  "Make an edit of the change of OLD-LEN characters into BEG to END."
  (unless cloudnotes-detail--applying
    (let ((before cloudnotes-detail--before))
      (setq cloudnotes-detail--before nil)
      (when (and cloudnotes-detail--id (not cloudnotes-detail--gone))
        (let ((new (buffer-substring-no-properties beg end)))
          (if (and before (<= (nth 0 before) beg) (<= (+ beg old-len) (nth 1 before)))
              (let* ((at (- beg (nth 0 before)))
                     (old (substring (nth 2 before) at (+ at old-len))))
                (unless (equal old new)
                  ;; The text before BEG did not change: its bytes are the offset.
                  (let ((start (1- (position-bytes beg))))
                    (cloudnotes-detail--add-edit start (+ start (string-bytes old)) new))))
            ;; The two hooks do not describe one change: send the whole text.
            (setq cloudnotes-detail--whole t cloudnotes-detail--edits nil)
            (cloudnotes-detail--mark-dirty)))))))

(defun cloudnotes-detail--bytes-prefix (text n)
  "The first N bytes of TEXT in UTF-8, as a string."
  (decode-coding-string (substring (encode-coding-string text 'utf-8 t) 0 n) 'utf-8 t))

(defun cloudnotes-detail--add-edit (start end text)
  "Add the edit replacing bytes START to END with TEXT, merging typing."
  (unless cloudnotes-detail--whole
    (let* ((prev (car cloudnotes-detail--edits))
           (pstart (nth 0 prev))
           (pend (and prev (+ pstart (string-bytes (nth 2 prev))))))
      (cond
       ((and prev (= start end pend))   ; typing on after the previous edit
        (setcar cloudnotes-detail--edits (list pstart (nth 1 prev) (concat (nth 2 prev) text))))
       ((and prev (string-empty-p text) (= end pend) (>= start pstart)) ; erasing what it typed
        (setcar cloudnotes-detail--edits
                (list pstart (nth 1 prev)
                      (cloudnotes-detail--bytes-prefix (nth 2 prev) (- start pstart)))))
       ((and prev (string-empty-p text) (= end pend)) ; erasing it and more before it
        (setcar cloudnotes-detail--edits (list start (nth 1 prev) "")))
       (t
        (push (list start end text) cloudnotes-detail--edits)
        (when (> (length cloudnotes-detail--edits) 1000) ; the server's limit per request
          (setq cloudnotes-detail--whole t cloudnotes-detail--edits nil))))))
  (cloudnotes-detail--mark-dirty))

(defun cloudnotes-detail--mark-dirty ()
  "Note a change not sent yet and (re)start the debounce timer."
  (unless cloudnotes-detail--dirty
    (setq cloudnotes-detail--dirty t cloudnotes-detail--dirty-since (float-time)))
  (setq cloudnotes-detail--failed nil)
  (when (timerp cloudnotes-detail--timer) (cancel-timer cloudnotes-detail--timer))
  (setq cloudnotes-detail--timer
        (run-at-time (max 0 (min cloudnotes-debounce
                                 (- (+ cloudnotes-detail--dirty-since cloudnotes-save-max-delay)
                                    (float-time))))
                     nil #'cloudnotes-detail--timer-fired)))

(defun cloudnotes-detail--drop-changes ()
  "Stop the debounce timer and forget the changes not sent yet."
  (when (timerp cloudnotes-detail--timer) (cancel-timer cloudnotes-detail--timer))
  (setq cloudnotes-detail--dirty nil cloudnotes-detail--edits nil
        cloudnotes-detail--whole nil cloudnotes-detail--timer nil))

(defun cloudnotes-detail--timer-fired ()
  "The pause in typing is over: send the changes."
  (setq cloudnotes-detail--timer nil)
  (cloudnotes--safely "save" (cloudnotes-detail--pump t)))

;;; Saving

(defun cloudnotes-detail--pending-p (id)
  "Non-nil while text of memo ID is waiting or on its way."
  (or (and (equal id cloudnotes-detail--id) cloudnotes-detail--dirty)
      (equal id (plist-get cloudnotes-detail--inflight :id))
      (cl-some (lambda (item) (equal id (plist-get item :id))) cloudnotes-detail--queue)))

(defun cloudnotes-detail--pump (&optional now)
  "Send the next save unless one is on its way; return non-nil while one is.
Changes of the memo shown wait for the debounce timer unless NOW."
  (when (and (not cloudnotes-detail--inflight) (cloudnotes--running-p))
    (cond
     (cloudnotes-detail--queue
      (let ((item (pop cloudnotes-detail--queue)))
        (cloudnotes-detail--send (plist-get item :id) (plist-get item :text) nil)))
     ((and cloudnotes-detail--dirty cloudnotes-detail--id (not cloudnotes-detail--gone)
           (not cloudnotes-detail--failed) (or now (not (timerp cloudnotes-detail--timer))))
      (let ((edits (and (not cloudnotes-detail--whole) (reverse cloudnotes-detail--edits))))
        (cloudnotes-detail--drop-changes)
        (cloudnotes-detail--send cloudnotes-detail--id nil edits)))))
  cloudnotes-detail--inflight)

(defun cloudnotes-detail--size ()
  "The length of the detail buffer's text in UTF-8 bytes."
  (with-current-buffer (cloudnotes-detail--buffer)
    (save-restriction (widen) (1- (position-bytes (point-max))))))

(defun cloudnotes-detail--send (id text edits)
  "Save memo ID's text.
Send EDITS with `memo/edit', else the whole TEXT.  TEXT nil means
the buffer's text (the memo shown); it is copied only if needed."
  (let ((item (list :id id :text (and (not edits) text)
                    :size (if text (string-bytes text) (cloudnotes-detail--size))
                    :edit (and edits t)))
        (base (gethash id cloudnotes-detail--versions)))
    (setq cloudnotes-detail--inflight item)
    (condition-case err
        (cloudnotes--request
         (if edits "memo/edit" "memo/update")
         (if edits
             (list :id id :baseVersion base
                   :edits (vconcat (mapcar (lambda (e) (list :start (nth 0 e) :end (nth 1 e)
                                                             :text (nth 2 e)))
                                           edits)))
           (list :id id :text (or text (cloudnotes-detail--text)) :baseVersion base))
         :then (lambda (result) (cloudnotes-detail--saved item result))
         :else (lambda (err) (cloudnotes-detail--save-failed item err)))
      (error                            ; not sent at all (text JSON cannot carry)
       (cloudnotes-detail--save-failed
        item (list :code -32603 :message (error-message-string err)))))
    (force-mode-line-update t)))

(defun cloudnotes-detail--item-text (item)
  "The text that the save ITEM sent (the buffer's, for the memo shown)."
  (or (plist-get item :text)
      (if (equal (plist-get item :id) cloudnotes-detail--id) (cloudnotes-detail--text) "")))

(defun cloudnotes-detail--saved (item result)
  "The server took the save ITEM and answered RESULT."
  (setq cloudnotes-detail--inflight nil)
  (let* ((id (plist-get item :id))
         (memo (plist-get result :memo))
         (info (or memo result)))
    (puthash id (plist-get info :version) cloudnotes-detail--versions)
    (when (equal id cloudnotes-detail--id)
      (setq cloudnotes-detail--title (plist-get info :title)))
    (unless (or memo (eql (plist-get result :length) (plist-get item :size)))
      ;; The server's text is not the one meant: send the whole text, on its version.
      (if (equal id cloudnotes-detail--id)
          (progn (setq cloudnotes-detail--whole t cloudnotes-detail--edits nil)
                 (cloudnotes-detail--mark-dirty))
        (push (list :id id :text (cloudnotes-detail--item-text item)) cloudnotes-detail--queue))))
  (cloudnotes-detail--pump)
  (cloudnotes-detail--after-save))

(defun cloudnotes-detail--after-save ()
  "Mark the buffer unmodified once the server has all of it."
  (let ((buf (get-buffer cloudnotes-detail--buffer-name)))
    (when (and buf cloudnotes-detail--id (not (cloudnotes-detail--pending-p cloudnotes-detail--id)))
      (with-current-buffer buf (set-buffer-modified-p nil))))
  (force-mode-line-update t))

(defun cloudnotes-detail--keep (title text why)
  "Keep TEXT of the memo TITLE, not saved because of WHY; return where."
  (kill-new text)
  (with-current-buffer (get-buffer-create cloudnotes-detail--conflict-buffer)
    (goto-char (point-max))
    (insert (format "----- %s: “%s”, your text at %s -----\n"
                    why title (format-time-string "%F %T"))
            text "\n"))
  (format "the kill ring (C-y) and %s" cloudnotes-detail--conflict-buffer))

(defun cloudnotes-detail--save-failed (item err)
  "The server refused the save ITEM with the error ERR."
  (setq cloudnotes-detail--inflight nil)
  (let* ((id (plist-get item :id))
         (code (plist-get err :code))
         (current (equal id cloudnotes-detail--id))
         (title (if current cloudnotes-detail--title "a memo"))
         (latest (cloudnotes-detail--item-text item)))
    ;; Later texts of this memo were based on the same refused version.
    (dolist (queued cloudnotes-detail--queue)
      (when (equal id (plist-get queued :id)) (setq latest (plist-get queued :text))))
    (setq cloudnotes-detail--queue
          (cl-remove-if (lambda (queued) (equal id (plist-get queued :id))) cloudnotes-detail--queue))
    (when current
      (setq latest (cloudnotes-detail--text))
      (cloudnotes-detail--drop-changes))
    (cond
     ((eql code -1)                     ; the server ended: `cloudnotes--on-exit' tells
      (if current (setq cloudnotes-detail--dirty t cloudnotes-detail--whole t)
        (cloudnotes-detail--keep title latest "server stopped")))
     ((and (eql code -32602) (plist-get item :edit))
      ;; The edits did not fit the server's text: send the whole text.
      (if current
          (progn (setq cloudnotes-detail--whole t) (cloudnotes-detail--mark-dirty))
        (push (list :id id :text latest) cloudnotes-detail--queue)))
     ((eql code -33002)
      (cloudnotes-detail--conflict id latest (plist-get (plist-get err :data) :memo) current))
     ((eql code -33001)
      (cloudnotes--error "“%s” was deleted elsewhere; your text was not saved: it is in %s"
                         title (cloudnotes-detail--keep title latest "deleted elsewhere"))
      (when current
        (setq cloudnotes-detail--gone t)
        (with-current-buffer (cloudnotes-detail--buffer) (setq buffer-read-only t))))
     (current
      (setq cloudnotes-detail--dirty t cloudnotes-detail--whole t cloudnotes-detail--failed t)
      (cloudnotes--error "the memo was not saved: %s (C-x C-s tries again)"
                         (cloudnotes--error-text err)))
     (t
      (cloudnotes--error "a memo was not saved: %s; its text is in %s"
                         (cloudnotes--error-text err)
                         (cloudnotes-detail--keep title latest "not saved")))))
  (cloudnotes-detail--pump)
  (cloudnotes-detail--after-save))

(defun cloudnotes-detail--conflict (id mine memo current)
  "Memo ID changed elsewhere and is now MEMO; MINE was refused.
CURRENT is non-nil when the memo is the one shown."
  (when memo
    (puthash id (plist-get memo :version) cloudnotes-detail--versions))
  (cond
   ((and memo (equal (plist-get memo :text) mine))) ; the same text: nothing to merge
   (t
    (let ((where (cloudnotes-detail--keep (or (plist-get memo :title) cloudnotes-detail--title)
                                          mine "changed elsewhere")))
      (cloudnotes--error "“%s” was changed elsewhere (now version %s). Your text was NOT saved: it is in %s. The memo shows the current version"
                         (plist-get memo :title) (plist-get memo :version) where))
    (when (and current memo)
      (setq cloudnotes-detail--title (plist-get memo :title))
      (cloudnotes-detail--show-text (plist-get memo :text) t t)))))

(defun cloudnotes-detail--save-sync (&optional timeout)
  "Send what was typed now and wait up to TIMEOUT seconds for the answers."
  (let ((deadline (+ (float-time) (or timeout 10))))
    (while (and (cloudnotes--running-p) (cloudnotes-detail--pump t) (< (float-time) deadline))
      (accept-process-output cloudnotes--process 0.05))))

(defun cloudnotes-detail--keep-unsaved ()
  "Keep text not saved in the kill ring (the server stopped); non-nil if any."
  (when (and cloudnotes-detail--id (cloudnotes-detail--pending-p cloudnotes-detail--id)
             (get-buffer cloudnotes-detail--buffer-name))
    (kill-new (cloudnotes-detail--text))
    t))

(provide 'cloudnotes-detail-save)
;;; cloudnotes-detail-save.el ends here
