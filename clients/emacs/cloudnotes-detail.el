;;; cloudnotes-detail.el --- The memo pane of CloudNotes  -*- lexical-binding: t; -*-

;; This file is not part of GNU Emacs.

;;; Commentary:

;; The selected memo's text, edited in place and saved as you type
;; (saving is in cloudnotes-detail-save.el): the buffer and its mode, the
;; server's `detail/didShow' and `detail/didClear' shown in it, the header
;; line, `cloudnotes-save' and `revert-buffer'.

;;; Code:

(require 'cloudnotes)
(require 'cloudnotes-detail-save)

(declare-function cloudnotes-goto-list "cloudnotes-commands" ())
(declare-function cloudnotes-create "cloudnotes-commands" ())
(declare-function cloudnotes-delete "cloudnotes-commands" ())
(declare-function cloudnotes-share "cloudnotes-commands" (format))
(declare-function cloudnotes-history "cloudnotes-history" (&optional id title no-select))

(defun cloudnotes-detail--window ()
  "A window showing the detail buffer, or nil."
  (let ((buf (get-buffer cloudnotes-detail--buffer-name)))
    (and buf (get-buffer-window buf t))))

(defun cloudnotes-detail--kill ()
  "Kill the detail buffer and forget its state."
  (cloudnotes-detail--reset-state)
  (cloudnotes--kill-pane cloudnotes-detail--buffer-name #'cloudnotes-detail--killed))

(defun cloudnotes-detail--killed ()
  "The detail buffer is being killed: send what was typed first."
  (when (cloudnotes--running-p)
    (cloudnotes-detail--save-sync))
  (setq cloudnotes-detail--id nil))

;;; Showing what the server says

(defun cloudnotes-detail--show-text (text editable &optional keep-point)
  "Show TEXT, EDITABLE or not; KEEP-POINT keeps point where it was."
  (let ((buf (cloudnotes-detail--buffer)))
    (with-current-buffer buf
      (let ((cloudnotes-detail--applying t)
            (inhibit-read-only t)
            (points (mapcar (lambda (w) (cons w (window-point w))) (get-buffer-window-list buf nil t)))
            (pt (point)))
        (save-restriction (widen) (erase-buffer) (insert text))
        (goto-char (if keep-point (min pt (point-max)) (point-min)))
        (dolist (wp points)
          (set-window-point (car wp) (if keep-point (min (cdr wp) (point-max)) (point-min))))
        (unless (eq buffer-undo-list t) (setq buffer-undo-list nil))
        (set-buffer-modified-p nil)
        (setq buffer-read-only (not editable)))))
  (force-mode-line-update t))

(defun cloudnotes-detail--leave (new-id)
  "Another memo (NEW-ID, or nil) replaces the one shown: queue its unsent text."
  (let ((item cloudnotes-detail--inflight))
    ;; The save on its way may need the text after the buffer shows another.
    (when (and item (not (equal new-id cloudnotes-detail--id))
               (equal (plist-get item :id) cloudnotes-detail--id) (not (plist-get item :text)))
      (plist-put item :text (cloudnotes-detail--text))))
  (when (and cloudnotes-detail--id (not (equal new-id cloudnotes-detail--id))
             cloudnotes-detail--dirty (not cloudnotes-detail--gone))
    (setq cloudnotes-detail--queue
          (append cloudnotes-detail--queue
                  (list (list :id cloudnotes-detail--id :text (cloudnotes-detail--text)))))
    (cloudnotes-detail--drop-changes)))

(cloudnotes--on
 "detail/didShow"
 (lambda (params)
   (let* ((memo (plist-get params :memo))
          (id (plist-get memo :id)))
     ;; The same memo while newer text of ours is on its way: keep the buffer.
     ;; The version stays, so the next save meets the conflict (-33002).
     (unless (and (equal id cloudnotes-detail--id) (cloudnotes-detail--pending-p id))
       (cloudnotes-detail--leave id)
       (let ((same (equal id cloudnotes-detail--id)))
         (setq cloudnotes-detail--id id cloudnotes-detail--title (plist-get memo :title)
               cloudnotes-detail--gone nil cloudnotes-detail--failed nil)
         (puthash id (plist-get memo :version) cloudnotes-detail--versions)
         (cloudnotes-detail--show-text (plist-get memo :text)
                                       (eq (plist-get params :editable) t) same))
       (cloudnotes-detail--pump)))))

(cloudnotes--on
 "detail/didClear"
 (lambda (_params)
   (cloudnotes-detail--leave nil)
   (setq cloudnotes-detail--id nil cloudnotes-detail--title "" cloudnotes-detail--gone nil)
   (cloudnotes-detail--show-text "" nil)
   (cloudnotes-detail--pump)))

;;; The mode

(defun cloudnotes-detail--header ()
  "The detail's header line."
  (let ((id cloudnotes-detail--id))
    (cond
     ((eq cloudnotes--state 'dead) " Server stopped: what you type is not saved")
     ((not id) " No memo selected")
     (t (format " %s · v%s · %s"
                (string-replace "%" "%%" (or cloudnotes-detail--title ""))
                (or (gethash id cloudnotes-detail--versions) "?")
                (cond (cloudnotes-detail--gone "deleted elsewhere")
                      (cloudnotes-detail--failed "NOT saved")
                      (cloudnotes-detail--dirty "editing…")
                      ((cloudnotes-detail--pending-p id) "saving…")
                      (t "saved")))))))

(defvar cloudnotes-detail-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map [remap save-buffer] #'cloudnotes-save)
    (define-key map (kbd "C-c C-c") #'cloudnotes-save)
    (define-key map (kbd "C-c C-o") #'cloudnotes-goto-list)
    (define-key map (kbd "C-c C-n") #'cloudnotes-create)
    (define-key map (kbd "C-c C-d") #'cloudnotes-delete)
    (define-key map (kbd "C-c C-s") #'cloudnotes-share)
    (define-key map (kbd "C-c C-v") #'cloudnotes-history)
    (define-key map (kbd "C-c C-q") #'cloudnotes-quit)
    map)
  "Keys of the CloudNotes memo buffer.")

(define-derived-mode cloudnotes-detail-mode text-mode "CloudNotes Memo"
  "The selected memo, saved as you type.

\\{cloudnotes-detail-mode-map}"
  (setq header-line-format '(:eval (cloudnotes-detail--header))
        buffer-read-only t)
  (setq-local revert-buffer-function #'cloudnotes-detail--revert)
  (add-hook 'before-change-functions #'cloudnotes-detail--before-change nil t)
  (add-hook 'after-change-functions #'cloudnotes-detail--after-change nil t)
  (add-hook 'kill-buffer-hook #'cloudnotes-detail--killed nil t))

(defun cloudnotes-save ()
  "Send what was typed now and say when the server has it."
  (interactive)
  (cloudnotes--check)
  (setq cloudnotes-detail--failed nil)
  (cloudnotes-detail--save-sync)
  (let ((id cloudnotes-detail--id))
    (cond ((not id) (cloudnotes--message "no memo is shown"))
          (cloudnotes-detail--gone (cloudnotes--message "not saved: the memo was deleted elsewhere"))
          ((cloudnotes-detail--pending-p id) (cloudnotes--message "not saved yet"))
          (t (cloudnotes--message "memo saved (version %s)"
                                  (gethash id cloudnotes-detail--versions))))))

(defun cloudnotes-detail--revert (&rest _)
  "Drop what was not sent yet and show the memo as the server holds it."
  (cloudnotes--check)
  (let ((id (or cloudnotes-detail--id (user-error "No memo is shown"))))
    (cloudnotes-detail--drop-changes)
    (setq cloudnotes-detail--failed nil)
    (cloudnotes-detail--save-sync)
    ;; Selecting the memo shown changes nothing and answers it.
    (let ((memo (plist-get (cloudnotes--request-sync "memo/select" (list :id id)) :memo)))
      (when (equal (plist-get memo :id) cloudnotes-detail--id)
        (puthash id (plist-get memo :version) cloudnotes-detail--versions)
        (setq cloudnotes-detail--title (plist-get memo :title))
        (cloudnotes-detail--show-text (plist-get memo :text) t t)
        (cloudnotes--message "showing the memo as saved (version %s)" (plist-get memo :version))))))

(provide 'cloudnotes-detail)
;;; cloudnotes-detail.el ends here
