;;; cloudnotes.el --- Split-view memo pad on the CloudNotes server  -*- lexical-binding: t; -*-

;; Author: CloudNotes contributors
;; Version: 0.1.0
;; Package-Requires: ((emacs "28.1"))
;; Keywords: convenience, tools

;; This file is not part of GNU Emacs.

;;; Commentary:

;; A front end for the CloudNotes memo server.  `M-x cloudnotes' starts
;; `cloudnotes serve' and opens the split view: the list of memos on the
;; left (title, date and preview, newest first, with a search filter) and
;; the selected memo on the right, where it is edited in place and saved as
;; you type.
;;
;; The server owns the memos, the list's order and filter, and the
;; selection; it says what to show through JSON-RPC notifications, which
;; this package applies.  It speaks JSON-RPC through Emacs's own
;; `jsonrpc.el' (LSP's Content-Length framing).  Changes made elsewhere (in
;; another editor, or with the `cloudnotes' command line) show up by
;; themselves.
;;
;; The list never holds every memo: its buffer has one line per memo, and
;; only the rows around the visible part are fetched (see
;; cloudnotes-list.el), so a store of 100,000 memos opens as fast as one of
;; 1,000.
;;
;; This file holds the entry point, the customization and the connection
;; to the server; cloudnotes-list.el, cloudnotes-detail.el and
;; cloudnotes-commands.el hold the two panes and the other commands.  See
;; README.md for the keys.

;;; Code:

(require 'cl-lib)
(require 'jsonrpc)
(require 'subr-x)

(defgroup cloudnotes nil
  "Memo pad on the CloudNotes server."
  :group 'applications
  :prefix "cloudnotes-")

(defcustom cloudnotes-program nil
  "The `cloudnotes' program.
nil means $CLOUDNOTES_BIN if it is set, else \"cloudnotes\" on the
variable `exec-path'."
  :type '(choice (const :tag "$CLOUDNOTES_BIN, else cloudnotes" nil) file))

(defcustom cloudnotes-store nil
  "The memo store, a SQLite file.
nil means the server's default: $CLOUDNOTES_STORE, else
$XDG_DATA_HOME/cloudnotes/notes.sqlite.  The folder is made if needed."
  :type '(choice (const :tag "The server's default" nil) file))

(defcustom cloudnotes-server-args nil
  "More arguments for `cloudnotes serve', e.g. (\"--durability\" \"synced\")."
  :type '(repeat string))

(defcustom cloudnotes-log-file nil
  "File for the server's log; nil keeps it in a hidden buffer."
  :type '(choice (const :tag "A hidden buffer" nil) file))

(defcustom cloudnotes-locale nil
  "BCP 47 locale for dates and the placeholder title, such as \"ko-KR\".
nil means from $LC_ALL, $LC_TIME or $LANG."
  :type '(choice (const :tag "From the environment" nil) string))

(defcustom cloudnotes-time-zone nil
  "IANA time zone for dates, such as \"Asia/Seoul\".
nil means from $TZ, /etc/timezone or /etc/localtime, else UTC."
  :type '(choice (const :tag "From the system" nil) string))

(defcustom cloudnotes-debounce 0.3
  "Seconds of pause in typing after which the change is sent."
  :type 'number)

(defcustom cloudnotes-save-max-delay 2.0
  "Most seconds typed text waits before it is sent, even while you type."
  :type 'number)

(defcustom cloudnotes-list-width nil
  "Columns of the list window; nil means half the frame, 40 to 80."
  :type '(choice (const :tag "Half the frame" nil) integer))

(defcustom cloudnotes-title-width 20
  "Columns for the title in a list row."
  :type 'integer)

(defcustom cloudnotes-date-width 30
  "Columns for the date in a list row; 0 hides the date."
  :type 'integer)

(defcustom cloudnotes-list-prefetch 10
  "Rows fetched beyond the visible part of the list, above and below."
  :type 'integer)

(defcustom cloudnotes-list-max-rows 300
  "Most rows of the list kept in memory; the others are fetched when shown."
  :type 'integer)

(defcustom cloudnotes-search-as-you-type t
  "Non-nil means the list filters while the search query is typed."
  :type 'boolean)

(defcustom cloudnotes-share-format "text"
  "Default format of `cloudnotes-share'."
  :type '(choice (const "text") (const "markdown") (const "json")))

(defcustom cloudnotes-share-action 'both
  "What `cloudnotes-share' does with the result."
  :type '(choice (const :tag "Copy it to the kill ring" copy)
                 (const :tag "Show it in a buffer" show)
                 (const :tag "Both" both)))

(defcustom cloudnotes-confirm-delete t
  "Non-nil means ask before deleting a memo."
  :type 'boolean)

(defcustom cloudnotes-focus-on-create t
  "Non-nil means a new memo's window is selected, to type at once."
  :type 'boolean)

(defcustom cloudnotes-request-timeout 30
  "Seconds to wait for the answer to an interactive request."
  :type 'number)

(defcustom cloudnotes-events-buffer-size 0
  "Size of the JSON-RPC events buffer; 0 logs nothing, nil without limit.
Set it to nil to debug: \\[cloudnotes-events] shows the buffer."
  :type '(choice (const :tag "No limit" nil) integer))

(defface cloudnotes-title '((t :inherit bold))
  "Face of memo titles in the list.")
(defface cloudnotes-date '((t :inherit shadow))
  "Face of dates in the list.")
(defface cloudnotes-preview '((t :inherit default))
  "Face of previews in the list.")
(defface cloudnotes-selected '((t :inherit highlight :extend t))
  "Face of the selected memo's row.")

;;; The session

(defvar cloudnotes--conn nil "The `jsonrpc-process-connection' to the server.")
(defvar cloudnotes--process nil "The server process.")
(defvar cloudnotes--state nil
  "The state of the session.
nil, `starting', `ready', `closing', `closed' or `dead'.")
(defvar cloudnotes--exit-code nil "The exit code of the last server, once it ended.")
(defvar cloudnotes--window-config nil "The windows before `cloudnotes'.")
(defvar cloudnotes--capabilities nil "The server's capabilities.")
(defvar cloudnotes--handlers (make-hash-table :test #'equal)
  "Notification method (a string) -> function of the params.")
(defvar cloudnotes--request-functions nil
  "Functions called with the METHOD and PARAMS of every request sent.")
(defvar cloudnotes--last-error nil "The last error message shown.")
(defvar cloudnotes--last-message nil "The last message shown.")
(defvar cloudnotes--started-hook nil "Run once the handshake is done.")
(defvar cloudnotes--redraw-hook nil "Run when the session's state changed.")

(defconst cloudnotes-version "0.1.0")

(defun cloudnotes--on (method function)
  "Handle the server's notification METHOD (a string) with FUNCTION."
  (puthash method function cloudnotes--handlers))

(defun cloudnotes--running-p ()
  "Non-nil while the server runs and the session is open."
  (and (memq cloudnotes--state '(starting ready))
       cloudnotes--conn (jsonrpc-running-p cloudnotes--conn)))

(defun cloudnotes--check ()
  "Signal a user error unless a session is open."
  (unless (cloudnotes--running-p)
    (user-error "CloudNotes is not running (M-x cloudnotes)")))

(defun cloudnotes--message (format-string &rest args)
  "Show FORMAT-STRING with ARGS in the echo area, prefixed."
  (setq cloudnotes--last-message (apply #'format format-string args))
  (message "CloudNotes: %s" cloudnotes--last-message))

(defun cloudnotes--error (format-string &rest args)
  "Show the error FORMAT-STRING with ARGS."
  (setq cloudnotes--last-error (apply #'format format-string args))
  (message "CloudNotes: %s" (propertize cloudnotes--last-error 'face 'error)))

(defun cloudnotes--error-text (err)
  "A sentence for the JSON-RPC error plist ERR."
  (let ((data (plist-get err :data)) (text (or (plist-get err :message) "error")))
    (when (plist-get data :reason)
      (setq text (format "%s (%s)" text (plist-get data :reason))))
    (when (plist-get data :index)
      (setq text (format "%s, at entry %s" text (plist-get data :index))))
    text))

(defmacro cloudnotes--safely (what &rest body)
  "Run BODY; report an error in it as one message naming WHAT."
  (declare (indent 1) (debug t))
  `(condition-case-unless-debug err
       (progn ,@body)
     (error (cloudnotes--error "%s: %s" ,what (error-message-string err)) nil)))

(cl-defun cloudnotes--request (method params &key then else
                                      (timeout cloudnotes-request-timeout))
  "Send the request METHOD (a string) with PARAMS and return at once.
THEN is called with the result; ELSE with the error plist (by
default the error is shown).  TIMEOUT nil waits forever."
  (run-hook-with-args 'cloudnotes--request-functions method params)
  (jsonrpc-async-request
   cloudnotes--conn (intern (concat ":" method)) params
   :success-fn (lambda (result)
                 (cloudnotes--safely method (when then (funcall then result))))
   :error-fn (lambda (err)
               (cloudnotes--safely method
                 (cond (else (funcall else err))
                       ((eql (plist-get err :code) -1)) ; the server ended; said elsewhere
                       (t (cloudnotes--error "%s: %s" method (cloudnotes--error-text err))))))
   :timeout timeout
   :timeout-fn (lambda () (cloudnotes--error "%s: no answer from the server" method))))

(defun cloudnotes--request-sync (method params &optional timeout)
  "Send METHOD with PARAMS and wait up to TIMEOUT seconds for the result."
  (run-hook-with-args 'cloudnotes--request-functions method params)
  (jsonrpc-request cloudnotes--conn (intern (concat ":" method)) params
                   :timeout (or timeout cloudnotes-request-timeout)))

(defun cloudnotes--dispatch (_conn method params)
  "Apply the server's notification METHOD with PARAMS."
  (let* ((name (string-remove-prefix ":" (symbol-name method)))
         (handler (gethash name cloudnotes--handlers)))
    (when handler
      (cloudnotes--safely name (funcall handler params)))))

;;; Starting

(defun cloudnotes--program ()
  "The server program to run."
  (or cloudnotes-program
      (let ((env (getenv "CLOUDNOTES_BIN"))) (and env (not (string-empty-p env)) env))
      "cloudnotes"))

(defun cloudnotes--env-locale ()
  "The locale from the environment, as a BCP 47 tag, or nil."
  (let ((raw (or (getenv "LC_ALL") (getenv "LC_TIME") (getenv "LANG") "")))
    (when (string-match "\\`\\([a-zA-Z]\\{2,3\\}\\)_\\([a-zA-Z]\\{2\\}\\)" raw)
      (concat (downcase (match-string 1 raw)) "-" (upcase (match-string 2 raw))))))

(defun cloudnotes--env-time-zone ()
  "The IANA time zone of the system, or nil."
  (let ((zone-re "\\`\\(UTC\\|[A-Za-z][A-Za-z0-9_+-]*/[A-Za-z0-9_+/-]+\\)\\'")
        (tz (string-remove-prefix ":" (or (getenv "TZ") ""))))
    (cond ((string-match-p zone-re tz) tz)
          ((and (file-readable-p "/etc/timezone")
                (let ((line (string-trim (with-temp-buffer
                                           (insert-file-contents "/etc/timezone")
                                           (buffer-string)))))
                  (and (string-match-p zone-re line) line))))
          ((let ((link (file-symlink-p "/etc/localtime")))
             (and link (string-match "zoneinfo/\\(.+\\)\\'" link)
                  (match-string 1 link)))))))

(defun cloudnotes--command ()
  "The command line that starts the server."
  (let ((program (cloudnotes--program)))
    (unless (executable-find program)
      (user-error "Cannot run %s: set `cloudnotes-program'" program))
    (append (list (executable-find program) "serve")
            (when cloudnotes-store
              (let ((store (expand-file-name cloudnotes-store)))
                (make-directory (file-name-directory store) t)
                (list "--store" store)))
            (when cloudnotes-log-file
              (list "--log-file" (expand-file-name cloudnotes-log-file)))
            (list "--client-process-id" (number-to-string (emacs-pid)))
            cloudnotes-server-args)))

(defun cloudnotes--start ()
  "Start the server and run the handshake; return its capabilities."
  (let ((command (cloudnotes--command))
        (default-directory (expand-file-name "~/")))
    (setq cloudnotes--exit-code nil cloudnotes--last-error nil)
    (setq cloudnotes--conn
          (jsonrpc-process-connection
           :name "CloudNotes"
           :events-buffer-scrollback-size cloudnotes-events-buffer-size
           :notification-dispatcher #'cloudnotes--dispatch
           :on-shutdown #'cloudnotes--on-exit
           :process (lambda ()
                      (setq cloudnotes--process
                            (make-process :name "cloudnotes" :command command
                                          :connection-type 'pipe :coding 'utf-8-emacs-unix
                                          :noquery t
                                          :stderr (get-buffer-create "*CloudNotes stderr*"))))))
    (setq cloudnotes--state 'starting)
    (let* ((zone (or cloudnotes-time-zone (cloudnotes--env-time-zone)))
           (result (cloudnotes--initialize zone)))
      (setq cloudnotes--capabilities (plist-get result :capabilities)
            cloudnotes--state 'ready)
      (jsonrpc-notify cloudnotes--conn :initialized nil)
      result)))

(defun cloudnotes--initialize (zone)
  "Send `initialize' with the time zone ZONE; fall back to UTC if refused."
  (condition-case err
      (cloudnotes--request-sync
       "initialize"
       (list :clientInfo (list :name "cloudnotes.el" :version cloudnotes-version)
             :locale (or cloudnotes-locale (cloudnotes--env-locale))
             :timeZone zone))
    (jsonrpc-error
     (let ((data (alist-get 'jsonrpc-error-data (cdr err))))
       (if (and zone (equal (plist-get data :param) "timeZone"))
           (progn (cloudnotes--message "the server does not know the time zone %s; using UTC" zone)
                  (cloudnotes--initialize nil))
         (cloudnotes--stop-process)
         (error "The server did not start: %s%s"
                (or (alist-get 'jsonrpc-error-message (cdr err)) "no answer")
                (let ((why (cloudnotes--stderr-last-error)))
                  (if why (concat ": " why) ""))))))))

(defun cloudnotes--stderr-last-error ()
  "The server's last error line on stderr, or nil."
  (let ((buf (and cloudnotes--conn (ignore-errors (jsonrpc-stderr-buffer cloudnotes--conn)))))
    (when (buffer-live-p buf)
      (with-current-buffer buf
        (save-excursion
          (goto-char (point-max))
          (when (re-search-backward "error\\|critical\\|fatal" nil t)
            (string-trim (buffer-substring-no-properties
                          (line-beginning-position) (line-end-position)))))))))

(defun cloudnotes--on-exit (_conn)
  "The server process ended."
  (setq cloudnotes--exit-code (and cloudnotes--process
                                   (process-exit-status cloudnotes--process)))
  (cond
   ((memq cloudnotes--state '(closing closed))
    (setq cloudnotes--state 'closed))
   ((eq cloudnotes--state 'starting)    ; `cloudnotes--initialize' tells why
    (setq cloudnotes--state 'dead))
   (t
    (setq cloudnotes--state 'dead)
    (let ((kept (and (fboundp 'cloudnotes-detail--keep-unsaved)
                     (cloudnotes-detail--keep-unsaved)))
          (how (if (eq (process-status cloudnotes--process) 'signal)
                   (format "killed by signal %s" cloudnotes--exit-code)
                 (format "exit code %s" cloudnotes--exit-code))))
      (cloudnotes--error "the server stopped (%s)%s.%s Press q, then M-x cloudnotes to start again"
                         how
                         (let ((why (cloudnotes--stderr-last-error))) (if why (concat ": " why) ""))
                         (if kept " Text not saved is in the kill ring." "")))
    (run-hooks 'cloudnotes--redraw-hook))))

(defun cloudnotes--stop-process ()
  "Kill the server process if it still runs."
  (when (process-live-p cloudnotes--process)
    (delete-process cloudnotes--process)))

;;; Entry points

(declare-function cloudnotes-list--open "cloudnotes-list" ())
(declare-function cloudnotes-list--buffer "cloudnotes-list" ())
(declare-function cloudnotes-list--kill "cloudnotes-list" ())
(declare-function cloudnotes-detail--buffer "cloudnotes-detail" ())
(declare-function cloudnotes-detail--save-sync "cloudnotes-detail" (&optional timeout))
(declare-function cloudnotes-detail--keep-unsaved "cloudnotes-detail" ())
(declare-function cloudnotes-detail--kill "cloudnotes-detail" ())
(declare-function cloudnotes-detail--reset-state "cloudnotes-detail" ())

(defun cloudnotes--list-width ()
  "Columns of the list window."
  (or cloudnotes-list-width (max 40 (min 80 (/ (frame-width) 2)))))

(defun cloudnotes--show-windows ()
  "Lay out the list and the detail side by side in the selected frame."
  (delete-other-windows)
  (switch-to-buffer (cloudnotes-list--buffer))
  (let ((width (cloudnotes--list-width)))
    (when (> (window-total-width) (+ width 20))
      (set-window-buffer (split-window-right width) (cloudnotes-detail--buffer)))))

;;;###autoload
(defun cloudnotes ()
  "Open the CloudNotes split view: the list of memos and the selected memo.
Start the server first if it is not running."
  (interactive)
  (require 'cloudnotes-list)
  (require 'cloudnotes-detail)
  (require 'cloudnotes-commands)
  (require 'cloudnotes-sync)
  (if (cloudnotes--running-p)
      (cloudnotes--show-windows)
    (when (memq cloudnotes--state '(dead closing))
      (cloudnotes-quit))
    (setq cloudnotes--window-config (current-window-configuration))
    (cloudnotes-list--open)
    (cloudnotes-detail--reset-state)
    (cloudnotes-detail--buffer)
    (cloudnotes--show-windows)
    (condition-case err
        (cloudnotes--start)
      ((error quit)
       (cloudnotes--stop-process)
       (setq cloudnotes--state 'dead)
       (cloudnotes-quit)
       (signal (car err) (cdr err))))
    (run-hooks 'cloudnotes--started-hook)))

(defun cloudnotes-quit ()
  "Close CloudNotes: save what was typed, shut the server down, close its windows."
  (interactive)
  (when (cloudnotes--running-p)
    (cloudnotes-detail--save-sync)
    (setq cloudnotes--state 'closing)
    (condition-case err
        (cloudnotes--request-sync "shutdown" nil 10)
      (error (cloudnotes--error "shutdown: %s" (error-message-string err))))
    (when (jsonrpc-running-p cloudnotes--conn)
      (jsonrpc-notify cloudnotes--conn :exit nil))
    (with-timeout (5 (cloudnotes--stop-process))
      (while (process-live-p cloudnotes--process)
        (accept-process-output cloudnotes--process 0.05))))
  (when (and (memq cloudnotes--state '(dead starting)) (fboundp 'cloudnotes-detail--keep-unsaved)
             (cloudnotes-detail--keep-unsaved))
    (cloudnotes--message "the text that was not saved is in the kill ring"))
  (unless (process-live-p cloudnotes--process)
    (setq cloudnotes--state 'closed))
  (when (fboundp 'cloudnotes-list--kill)
    (cloudnotes-detail--kill)
    (cloudnotes-list--kill))
  (when cloudnotes--conn
    (dolist (buf (list (ignore-errors (jsonrpc-stderr-buffer cloudnotes--conn))
                       (ignore-errors (jsonrpc-events-buffer cloudnotes--conn))
                       (and cloudnotes--process (process-buffer cloudnotes--process))))
      (when (buffer-live-p buf)
        (let ((kill-buffer-query-functions nil)) (kill-buffer buf)))))
  (when (window-configuration-p cloudnotes--window-config)
    (ignore-errors (set-window-configuration cloudnotes--window-config)))
  (setq cloudnotes--window-config nil))

(defun cloudnotes-events ()
  "Show the JSON-RPC events buffer (see `cloudnotes-events-buffer-size')."
  (interactive)
  (cloudnotes--check)
  (display-buffer (jsonrpc-events-buffer cloudnotes--conn)))

(defun cloudnotes--kill-emacs ()
  "Shut the server down when Emacs exits."
  (when (cloudnotes--running-p)
    (ignore-errors (cloudnotes-quit))))

(add-hook 'kill-emacs-hook #'cloudnotes--kill-emacs)

(provide 'cloudnotes)
;;; cloudnotes.el ends here
