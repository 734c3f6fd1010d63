;;; cloudnotes-history.el --- Versions and trash of CloudNotes  -*- lexical-binding: t; -*-

;; This file is not part of GNU Emacs.

;;; Commentary:

;; The memos' kept versions and the trash.  `cloudnotes-history' lists
;; the earlier versions of a memo (`memo/history'), newest first; the
;; diff that turns the version at point into the memo's current text
;; shows in *CloudNotes diff* (diff.el), and `r' restores the version
;; (`memo/restore').  `cloudnotes-trash' lists the deleted memos
;; (`trash/list'); `u' brings the one at point back (`memo/undelete') and
;; `D' empties the trash.  The server's notifications update the split
;; view as usual.

;;; Code:

(require 'cl-lib)
(require 'diff)
(require 'subr-x)
(require 'cloudnotes)
(require 'cloudnotes-list)
(require 'cloudnotes-commands)
(require 'cloudnotes-detail-save)

(defconst cloudnotes-history--buffer "*CloudNotes history*")
(defconst cloudnotes-history--diff-buffer "*CloudNotes diff*")
(defconst cloudnotes-history--trash-buffer "*CloudNotes trash*")
(defconst cloudnotes-history--limit 1000 "Most rows asked for at once (the server's maxListLimit).")

(defvar-local cloudnotes-history--id nil "The memo whose versions the buffer lists.")
(defvar-local cloudnotes-history--title nil "The title of that memo.")
(defvar-local cloudnotes-history--texts nil "Version number -> its text, fetched once.")
(defvar-local cloudnotes-history--total 0 "Memos in the trash.")

;;; Rows shown in a buffer

(defun cloudnotes-history--draw (name mode rows line-function empty header)
  "Show ROWS in the buffer NAME, put in MODE; return the buffer.
Each row's line is what LINE-FUNCTION returns, with the row as its
`cloudnotes-row' property; EMPTY is the line when there are none.
HEADER is the header line.  Point stays on its line."
  (with-current-buffer (get-buffer-create name)
    (unless (eq major-mode mode) (funcall mode))
    (let ((inhibit-read-only t) (line (line-number-at-pos)))
      (erase-buffer)
      (dolist (row rows)
        (insert (propertize (funcall line-function row) 'cloudnotes-row row)))
      (unless rows (insert (propertize empty 'face 'shadow) "\n"))
      (goto-char (point-min))
      (forward-line (min (1- line) (max 0 (1- (length rows)))))
      (dolist (win (get-buffer-window-list nil nil t)) (set-window-point win (point))))
    (setq header-line-format (string-replace "%" "%%" header))
    (current-buffer)))

(defun cloudnotes-history--row ()
  "The row on the line at point."
  (or (get-text-property (line-beginning-position) 'cloudnotes-row)
      (user-error "Nothing here")))

;;; History

(defun cloudnotes-history--origin (version)
  "Who wrote VERSION: its origin, and the device for a device's."
  (let ((origin (plist-get version :origin)) (device (plist-get version :device)))
    (if device (format "%s (%s)" origin device) origin)))

(defun cloudnotes-history--number (version)
  "VERSION's number as shown: v1, v2..."
  (format "v%d" (plist-get version :version)))

(defun cloudnotes-history--widest (function versions)
  "The widest string FUNCTION makes of one of VERSIONS, in columns."
  (apply #'max 0 (mapcar (lambda (v) (string-width (funcall function v))) versions)))

(defun cloudnotes-history--line-function (versions)
  "A function making the line of one of VERSIONS, in aligned columns.
The version's number, date, origin, title and size."
  (let ((number-width (cloudnotes-history--widest #'cloudnotes-history--number versions))
        (origin-width (cloudnotes-history--widest #'cloudnotes-history--origin versions)))
    (lambda (v)
      (concat (propertize (cloudnotes-list--fit (cloudnotes-history--number v) number-width)
                          'face 'cloudnotes-title)
              "  " (propertize (cloudnotes-list--fit (plist-get v :displayDate) cloudnotes-date-width)
                               'face 'cloudnotes-date)
              "  " (cloudnotes-list--fit (cloudnotes-history--origin v) origin-width)
              "  " (propertize (cloudnotes-list--fit (plist-get v :title) cloudnotes-title-width)
                               'face 'cloudnotes-title)
              "  " (cloudnotes-commands--plural (plist-get v :size) "byte")
              "\n"))))

(defun cloudnotes-history (&optional id title no-select)
  "List the earlier versions of the memo at point (or the one shown), newest first.
The diff of the version at point against the memo's current text
shows in another window, and
\\<cloudnotes-history-mode-map>\\[cloudnotes-history-restore] restores the version.
From Lisp, ID and TITLE name the memo, and NO-SELECT non-nil
leaves the selected window alone."
  (interactive)
  (cloudnotes--check)
  (let ((id (or id (cloudnotes-commands--memo-id)))
        (title (or title (plist-get (cloudnotes-commands--row) :title) cloudnotes-detail--title)))
    ;; The versions that the text typed keeps are listed too.
    (cloudnotes-detail--save-sync)
    (cloudnotes--request
     "memo/history" (list :id id :limit cloudnotes-history--limit)
     :then (lambda (result)
             (let* ((versions (append (plist-get result :versions) nil))
                    (buf (cloudnotes-history--draw
                          cloudnotes-history--buffer #'cloudnotes-history-mode versions
                          (cloudnotes-history--line-function versions)
                          (concat "  No earlier versions: one is kept when the text is replaced"
                                  " after a pause, or elsewhere.")
                          (format " History of “%s”: %s   RET diff, r restore, g refresh, q quit"
                                  title (cloudnotes-commands--plural (plist-get result :total) "version")))))
               (with-current-buffer buf
                 (setq cloudnotes-history--id id cloudnotes-history--title title
                       cloudnotes-history--texts (make-hash-table))
                 (unless no-select (pop-to-buffer buf))
                 (when versions (cloudnotes-history-diff))))))))

(defun cloudnotes-history--current-text (id)
  "The current text of memo ID: the memo window's while it shows the memo."
  (if (equal id cloudnotes-detail--id)
      (cloudnotes-detail--text)
    (plist-get (cloudnotes--request-sync "memo/share" (list :id id :format "text")) :text)))

(defun cloudnotes-history--show-diff (id version text)
  "Show the diff that turns TEXT into the current text of memo ID.
TEXT is the text of VERSION, a row of the history."
  (let ((old (generate-new-buffer " *cloudnotes old*"))
        (new (generate-new-buffer " *cloudnotes new*"))
        (diff-use-labels nil)
        (coding-system-for-read 'utf-8-unix)
        (coding-system-for-write 'utf-8-unix))
    (unwind-protect
        (progn
          ;; Each text ends with a newline for diff, so that one without
          ;; gets no "\ No newline at end of file" after every hunk.
          (with-current-buffer old (insert text "\n"))
          (with-current-buffer new (insert (cloudnotes-history--current-text id) "\n"))
          (with-current-buffer
              (diff-no-select old new
                              (list "-u" "--label"
                                    (shell-quote-argument
                                     (concat (cloudnotes-history--number version) "  "
                                             (plist-get version :displayDate)))
                                    "--label" "current")
                              t (get-buffer-create cloudnotes-history--diff-buffer))
            ;; diff.el's own would compare the temporary buffers, gone by then.
            (setq-local revert-buffer-function
                        (lambda (&rest _) (cloudnotes-history--show-diff id version text)))
            (display-buffer (current-buffer))))
      (kill-buffer old)
      (kill-buffer new))))

(defun cloudnotes-history-diff ()
  "Show the diff that turns the version at point into the memo's current text."
  (interactive)
  (cloudnotes--check)
  (let* ((version (cloudnotes-history--row))
         (number (plist-get version :version))
         (id cloudnotes-history--id)
         (texts cloudnotes-history--texts)
         (text (gethash number texts)))
    (if text
        (cloudnotes-history--show-diff id version text)
      (cloudnotes--request "memo/version" (list :id id :version number)
                           :then (lambda (result)
                                   (puthash number (plist-get result :text) texts)
                                   (cloudnotes-history--show-diff id version (plist-get result :text)))))))

(defun cloudnotes-history-next (n)
  "Move to the Nth next version and show its diff."
  (interactive "p")
  (forward-line n)
  (when (eobp) (forward-line -1))
  (cloudnotes-history-diff))

(defun cloudnotes-history-previous (n)
  "Move to the Nth previous version and show its diff."
  (interactive "p")
  (cloudnotes-history-next (- n)))

(defun cloudnotes-history-restore ()
  "Make the version at point the memo's text again.
The text it replaces is kept as a new version, so a restore is
undone the same way."
  (interactive)
  (cloudnotes--check)
  (let* ((version (cloudnotes-history--row))
         (id cloudnotes-history--id)
         (buf (current-buffer)))
    ;; The restore is based on the version the text typed was saved as.
    (cloudnotes-detail--save-sync)
    (let ((base (gethash id cloudnotes-detail--versions)))
      (setq cloudnotes-list--follow t)
      (cloudnotes--request "memo/restore"
                           (append (list :id id :version (plist-get version :version))
                                   (when base (list :baseVersion base)))
                           :then (lambda (result)
                                   (cloudnotes--message
                                    "restored %s of “%s” (the text it replaced is kept in the history)"
                                    (cloudnotes-history--number version) (plist-get (plist-get result :memo) :title))
                                   (when (buffer-live-p buf)
                                     (with-current-buffer buf (revert-buffer))))))))

(defvar cloudnotes-history-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "RET") #'cloudnotes-history-diff)
    (define-key map "=" #'cloudnotes-history-diff)
    (define-key map "n" #'cloudnotes-history-next)
    (define-key map "p" #'cloudnotes-history-previous)
    (define-key map "r" #'cloudnotes-history-restore)
    map)
  "Keys of the history buffer.")

(define-derived-mode cloudnotes-history-mode special-mode "CloudNotes History"
  "The earlier versions of a memo, newest first.

\\{cloudnotes-history-mode-map}"
  (setq truncate-lines t)
  (setq-local revert-buffer-function
              (lambda (&rest _) (cloudnotes-history cloudnotes-history--id cloudnotes-history--title t))))

;;; Trash

(defun cloudnotes-trash (&optional no-select)
  "List the deleted memos, most recently deleted first.
\\<cloudnotes-trash-mode-map>\\[cloudnotes-trash-undelete] brings the memo at point back.
NO-SELECT non-nil leaves the selected window alone."
  (interactive)
  (cloudnotes--check)
  (cloudnotes--request
   "trash/list" (list :limit cloudnotes-history--limit)
   :then (lambda (result)
           (let ((total (plist-get result :total)))
             (with-current-buffer (cloudnotes-history--draw
                                   cloudnotes-history--trash-buffer #'cloudnotes-trash-mode
                                   (append (plist-get result :rows) nil) #'cloudnotes-list--row-line
                                   "  The trash is empty."
                                   (format " Trash: %s   u bring back, D empty, g refresh, q quit"
                                           (cloudnotes-commands--plural total "memo")))
               (setq cloudnotes-history--total total)
               (unless no-select (pop-to-buffer (current-buffer))))))))

(defun cloudnotes-trash-undelete ()
  "Bring the memo at point back from the trash.
The server selects and shows it, and clears the search."
  (interactive)
  (cloudnotes--check)
  (let ((row (cloudnotes-history--row)))
    (cloudnotes-detail--save-sync)
    (setq cloudnotes-list--follow t)
    (cloudnotes--request "memo/undelete" (list :id (plist-get row :id))
                         :then (lambda (_)
                                 (setq cloudnotes-list--query nil)
                                 (cloudnotes--message "brought back “%s”" (plist-get row :title))
                                 (cloudnotes-trash t)))))

(defun cloudnotes-trash-empty ()
  "Purge every memo in the trash now, after asking."
  (interactive)
  (cloudnotes--check)
  (if (zerop cloudnotes-history--total)
      (cloudnotes--message "the trash is empty")
    (when (yes-or-no-p (format "Empty the trash? Its %s will be gone for good. "
                               (cloudnotes-commands--plural cloudnotes-history--total "memo")))
      (cloudnotes--request "trash/empty" nil
                           :then (lambda (result)
                                   (cloudnotes--message "purged %s"
                                                        (cloudnotes-commands--plural (plist-get result :purged) "memo"))
                                   (cloudnotes-trash t))))))

(defvar cloudnotes-trash-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "RET") #'cloudnotes-trash-undelete)
    (define-key map "u" #'cloudnotes-trash-undelete)
    (define-key map "D" #'cloudnotes-trash-empty)
    (define-key map "n" #'next-line)
    (define-key map "p" #'previous-line)
    map)
  "Keys of the trash buffer.")

(define-derived-mode cloudnotes-trash-mode special-mode "CloudNotes Trash"
  "The deleted memos, most recently deleted first.

\\{cloudnotes-trash-mode-map}"
  (setq truncate-lines t)
  (setq-local revert-buffer-function (lambda (&rest _) (cloudnotes-trash t))))

(provide 'cloudnotes-history)
;;; cloudnotes-history.el ends here
