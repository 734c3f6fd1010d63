;;; cloudnotes-commands.el --- The commands of CloudNotes  -*- lexical-binding: t; -*-

;; This file is not part of GNU Emacs.

;;; Commentary:

;; The list's mode and keys, and the commands: select, create, delete
;; and search memos, share a memo (text, Markdown or JSON), import and
;; export files.  The sync commands are in cloudnotes-sync.el, the
;; history and the trash in cloudnotes-history.el.

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'cloudnotes)
(require 'cloudnotes-list)

(declare-function cloudnotes-detail--save-sync "cloudnotes-detail-save" (&optional timeout))
(declare-function cloudnotes-detail--window "cloudnotes-detail" ())
(declare-function cloudnotes-detail--buffer "cloudnotes-detail-save" ())
(declare-function cloudnotes-sync-status "cloudnotes-sync" ())
(declare-function cloudnotes-sync-now "cloudnotes-sync" ())
(declare-function cloudnotes-conflicts "cloudnotes-sync" ())
(declare-function cloudnotes-history "cloudnotes-history" (&optional id title no-select))
(declare-function cloudnotes-trash "cloudnotes-history" (&optional no-select))

(defvar cloudnotes-commands--tokens 0 "Counter of work-done tokens.")
(defvar cloudnotes-commands--titles (make-hash-table :test #'equal)
  "Progress token -> title of the work.")
(defvar cloudnotes-commands--last-share nil "The result of the last share.")

(defconst cloudnotes-commands--share-buffer "*CloudNotes share*")

(defun cloudnotes-commands--token (kind)
  "A new progress token for KIND of work."
  (format "%s-%d" kind (cl-incf cloudnotes-commands--tokens)))

(defun cloudnotes-commands--plural (n word)
  "N and WORD, plural unless N is 1."
  (format "%d %s%s" n word (if (eql n 1) "" "s")))

(cloudnotes--on
 "$/progress"
 (lambda (params)
   (let* ((token (plist-get params :token))
          (value (plist-get params :value))
          (title (or (plist-get value :title) (gethash token cloudnotes-commands--titles) "Working")))
     (pcase (plist-get value :kind)
       ("begin" (puthash token title cloudnotes-commands--titles)
        (cloudnotes--message "%s…" title))
       ("report" (cloudnotes--message "%s… %s%% %s" title (or (plist-get value :percentage) 0)
                                      (or (plist-get value :message) "")))
       ("end" (remhash token cloudnotes-commands--titles))))))

;;; The list mode and its keys

(defun cloudnotes-list--header ()
  "The list's header line."
  (concat
   (cond ((eq cloudnotes--state 'dead) " [server stopped]")
         ((null cloudnotes-list--total) " Loading…")
         (t (format " %d memo%s" cloudnotes-list--total
                    (if (= cloudnotes-list--total 1) "" "s"))))
   (if cloudnotes-list--query
       (format "  matching “%s”" (string-replace "%" "%%" cloudnotes-list--query))
     "")
   (if (member cloudnotes-list--sync-state '("syncing" "failed"))
       (format "  sync: %s" cloudnotes-list--sync-state) "")))

(defvar cloudnotes-list-mode-map
  (let ((map (make-sparse-keymap)))
    (suppress-keymap map)
    (define-key map (kbd "RET") #'cloudnotes-select)
    (define-key map "n" #'next-line)
    (define-key map "p" #'previous-line)
    (define-key map "c" #'cloudnotes-create)
    (define-key map "+" #'cloudnotes-create)
    (define-key map "d" #'cloudnotes-delete)
    (define-key map "/" #'cloudnotes-search)
    (define-key map "\\" #'cloudnotes-search-clear)
    (define-key map "s" #'cloudnotes-share)
    (define-key map "i" #'cloudnotes-import)
    (define-key map "e" #'cloudnotes-export)
    (define-key map "y" #'cloudnotes-sync-status)
    (define-key map "Y" #'cloudnotes-sync-now)
    (define-key map "C" #'cloudnotes-conflicts)
    (define-key map "h" #'cloudnotes-history)
    (define-key map "t" #'cloudnotes-trash)
    (define-key map "g" #'cloudnotes-refresh)
    (define-key map (kbd "TAB") #'cloudnotes-goto-detail)
    (define-key map "o" #'cloudnotes-goto-detail)
    (define-key map "q" #'cloudnotes-quit)
    (define-key map "?" #'describe-mode)
    (define-key map [remap end-of-buffer] #'cloudnotes-list-last)
    map)
  "Keys of the CloudNotes list.")

(defun cloudnotes-list-last ()
  "Move to the last memo of the list."
  (interactive)
  (push-mark)
  (goto-char (point-max))
  (forward-line -1))

(define-derived-mode cloudnotes-list-mode special-mode "CloudNotes"
  "The list of memos, newest first.

\\{cloudnotes-list-mode-map}"
  (setq truncate-lines t
        buffer-undo-list t
        ;; The rows not fetched yet are blank lines; with the direction found paragraph by paragraph,
        ;; redisplay searches back through all of them on a jump to the end.
        bidi-paragraph-direction 'left-to-right
        header-line-format '(:eval (cloudnotes-list--header)))
  (add-hook 'window-scroll-functions #'cloudnotes-list--scrolled nil t)
  (add-hook 'post-command-hook #'cloudnotes-list--scrolled nil t)
  (add-hook 'window-size-change-functions #'cloudnotes-list--scrolled nil t)
  (add-hook 'kill-buffer-hook #'cloudnotes-list--killed nil t))

;;; Selecting, creating, deleting, searching

(defun cloudnotes-commands--row ()
  "The row at point in the list, or nil."
  (and (eq major-mode 'cloudnotes-list-mode)
       (get-text-property (line-beginning-position) 'cloudnotes-row)))

(defun cloudnotes-commands--memo-id ()
  "The id of the memo at point in the list, else the selected memo's."
  (or (and (eq major-mode 'cloudnotes-list-mode)
           (get-text-property (line-beginning-position) 'cloudnotes-id))
      (and (not (eq major-mode 'cloudnotes-list-mode)) cloudnotes-list--selected-id)
      (user-error "No memo here")))

(defun cloudnotes-select ()
  "Show the memo at point in the detail window."
  (interactive)
  (cloudnotes--check)
  (let ((id (cloudnotes-commands--memo-id)))
    (cloudnotes-detail--save-sync)
    (setq cloudnotes-list--follow t)
    (cloudnotes--request "memo/select" (list :id id))))

(defun cloudnotes-create ()
  "Create a memo on top of the list and show it (this clears the search)."
  (interactive)
  (cloudnotes--check)
  (cloudnotes-detail--save-sync)
  (setq cloudnotes-list--follow t)
  (cloudnotes--request "memo/create" (list :text "")
                       :then (lambda (_result)
                               (setq cloudnotes-list--query nil)
                               (when cloudnotes-focus-on-create
                                 (let ((win (cloudnotes-detail--window)))
                                   (when win (select-window win)))))))

(defun cloudnotes-delete ()
  "Delete the memo at point; the server selects the next one.
The memo goes to the trash, where \[cloudnotes-trash] finds it."
  (interactive)
  (cloudnotes--check)
  (let* ((id (cloudnotes-commands--memo-id))
         (title (or (plist-get (cloudnotes-commands--row) :title) "this memo")))
    (when (or (not cloudnotes-confirm-delete)
              (y-or-n-p (format "Delete “%s”? " title)))
      (cloudnotes-detail--save-sync)
      (setq cloudnotes-list--follow t)
      (cloudnotes--request "memo/delete" (list :id id)
                           :then (lambda (_) (cloudnotes--message "deleted “%s”" title))))))

(defun cloudnotes-commands--search (query)
  "Filter the list by QUERY (\"\" clears the filter)."
  (let ((win (get-buffer-window (cloudnotes-list--buffer) t)))
    (setq cloudnotes-list--follow t)
    (cloudnotes--request "memo/search"
                         (list :query query
                               :limit (min 1000 (+ (if win (window-body-height win) 40)
                                                   cloudnotes-list-prefetch)))
                         :then (lambda (result)
                                 (let ((q (plist-get result :query)))
                                   (setq cloudnotes-list--query (if (equal q "") nil q)))
                                 (cloudnotes-list--fill 0 (plist-get result :rows)
                                                        (plist-get result :total))
                                 (unless cloudnotes-list--selected-index
                                   (with-current-buffer (cloudnotes-list--buffer)
                                     (goto-char (point-min))
                                     (dolist (w (get-buffer-window-list nil nil t))
                                       (set-window-point w (point-min)))))))))

(defun cloudnotes-commands--read-query ()
  "Read a search query while the list follows what is typed.
Return (QUERY SENT), SENT non-nil if QUERY was searched already."
  (let* ((old (or cloudnotes-list--query ""))
         (sent old)
         (timer nil)
         (mini nil)
         (search-now (lambda (query)
                       (unless (equal query sent)
                         (setq sent query)
                         (cloudnotes-commands--search query))))
         (on-change (lambda (&rest _)
                      (when (timerp timer) (cancel-timer timer))
                      (setq timer (run-at-time
                                   0.15 nil
                                   (lambda ()
                                     (when (and (buffer-live-p mini) (cloudnotes--running-p))
                                       (funcall search-now (with-current-buffer mini
                                                             (minibuffer-contents-no-properties))))))))))
    (unwind-protect
        (condition-case nil
            (let ((query (minibuffer-with-setup-hook
                             (lambda ()
                               (when cloudnotes-search-as-you-type
                                 (setq mini (current-buffer))
                                 (add-hook 'after-change-functions on-change nil t)))
                           (read-from-minibuffer "Search memos (empty: all): " old))))
              (list query (equal query sent)))
          (quit (when (timerp timer) (cancel-timer timer))
                (funcall search-now old)   ; back to the filter before
                (signal 'quit nil)))
      (when (timerp timer) (cancel-timer timer))
      (when (buffer-live-p mini)
        (with-current-buffer mini (remove-hook 'after-change-functions on-change t))))))

(defun cloudnotes-search (query &optional sent)
  "Show only the memos whose text contains QUERY, in any case.
The list follows as you type.  An empty QUERY shows every memo.
SENT non-nil means QUERY was searched already while typed."
  (interactive (progn (cloudnotes--check) (cloudnotes-commands--read-query)))
  (cloudnotes--check)
  (unless sent
    (cloudnotes-commands--search query)))

(defun cloudnotes-search-clear ()
  "Show every memo again."
  (interactive)
  (cloudnotes-search ""))

(defun cloudnotes-refresh ()
  "Fetch the rows shown again (changes elsewhere arrive by themselves)."
  (interactive)
  (cloudnotes--check)
  (cloudnotes-list--refresh))

(defun cloudnotes-goto-detail ()
  "Select the window of the memo's text."
  (interactive)
  (let ((win (cloudnotes-detail--window)))
    (if win (select-window win) (pop-to-buffer (cloudnotes-detail--buffer)))))

(defun cloudnotes-goto-list ()
  "Select the list window."
  (interactive)
  (let ((win (get-buffer-window (cloudnotes-list--buffer))))
    (if win (select-window win) (pop-to-buffer (cloudnotes-list--buffer)))))

;;; Share

(defun cloudnotes-commands--read-format (prompt formats default)
  "Read one of FORMATS with PROMPT and DEFAULT."
  (completing-read (format-prompt prompt default) formats nil t nil nil default))

(defun cloudnotes-share (format)
  "Share the memo at point (or the one shown) as FORMAT: text, markdown or json.
The result goes to the kill ring and to a buffer, as
`cloudnotes-share-action' says."
  (interactive (list (cloudnotes-commands--read-format
                      "Share as" '("text" "markdown" "json") cloudnotes-share-format)))
  (cloudnotes--check)
  (let ((id (cloudnotes-commands--memo-id)))
    (cloudnotes-detail--save-sync)
    (cloudnotes--request "memo/share" (list :id id :format format)
                         :then #'cloudnotes-commands--shared)))

(defun cloudnotes-commands--shared (result)
  "Copy and show the share RESULT."
  (setq cloudnotes-commands--last-share result)
  (let ((text (plist-get result :text))
        (mime (or (plist-get result :mimeType) ""))
        (copy (memq cloudnotes-share-action '(copy both))))
    (when copy (kill-new text))
    (when (memq cloudnotes-share-action '(show both))
      (with-current-buffer (get-buffer-create cloudnotes-commands--share-buffer)
        (let ((inhibit-read-only t)) (erase-buffer) (insert text))
        (funcall (cond ((and (string-prefix-p "text/markdown" mime) (fboundp 'markdown-mode))
                        'markdown-mode)
                       ((string-prefix-p "application/json" mime)
                        (if (fboundp 'js-json-mode) 'js-json-mode 'js-mode))
                       (t 'text-mode)))
        (setq header-line-format (format " %s (%s)%s" (plist-get result :filename) mime
                                         (if copy ": copied to the kill ring" "")))
        (set-buffer-modified-p nil)
        (goto-char (point-min))
        (display-buffer (current-buffer))))
    (cloudnotes--message "shared “%s” as %s%s" (plist-get result :title)
                         (plist-get result :filename) (if copy ", copied to the kill ring" ""))))

;;; Import and export

(defun cloudnotes-import (file)
  "Import the memos of FILE, a JSON array in the app's format (or an export)."
  (interactive (list (read-file-name "Import memos from JSON file: " nil nil t)))
  (cloudnotes--check)
  (let ((path (expand-file-name file)))
    (when (file-remote-p path) (user-error "The server reads local files only"))
    (cloudnotes--request "memo/import"
                         (list :path path :workDoneToken (cloudnotes-commands--token "import"))
                         :timeout nil
                         :then (lambda (result)
                                 (cloudnotes--message "imported %s from %s"
                                                      (cloudnotes-commands--plural
                                                       (plist-get result :imported) "memo")
                                                      (abbreviate-file-name path)))
                         :else (lambda (err)
                                 (cloudnotes--error "nothing imported: %s" (cloudnotes--error-text err))))))

(defun cloudnotes-export (format path)
  "Export every memo as FORMAT to PATH.
FORMAT \"json\" writes one file that `cloudnotes-import' reads back;
\"markdown\" writes a folder with one file per memo."
  (interactive
   (let* ((format (cloudnotes-commands--read-format "Export format" '("json" "markdown") "json"))
          (json (equal format "json"))
          (default (expand-file-name (format (if json "cloudnotes-%s.json" "cloudnotes-%s")
                                             (format-time-string "%F")))))
     (list format (read-file-name (if json "Export to JSON file: " "Export to new folder: ")
                                  nil default nil (file-name-nondirectory default)))))
  (cloudnotes--check)
  (let* ((path (expand-file-name path))
         (overwrite (and (file-exists-p path)
                         (or (yes-or-no-p (format "%s exists; overwrite it? " path))
                             (user-error "Not exported")))))
    (when (file-remote-p path) (user-error "The server writes local files only"))
    (cloudnotes-detail--save-sync)
    (cloudnotes--request "memo/export"
                         (list :path path :format format :overwrite (if overwrite t :json-false)
                               :workDoneToken (cloudnotes-commands--token "export"))
                         :timeout nil
                         :then (lambda (result)
                                 (cloudnotes--message "exported %s to %s"
                                                      (cloudnotes-commands--plural
                                                       (plist-get result :exported) "memo")
                                                      (abbreviate-file-name (plist-get result :path))))
                         :else (lambda (err)
                                 (cloudnotes--error "not exported: %s" (cloudnotes--error-text err))))))

(provide 'cloudnotes-commands)
;;; cloudnotes-commands.el ends here
