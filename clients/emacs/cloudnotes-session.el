;;; cloudnotes-session.el --- The server and the session of CloudNotes  -*- lexical-binding: t; -*-

;; This file is not part of GNU Emacs.

;;; Commentary:

;; The session with the CloudNotes server: `cloudnotes serve' started
;; with its command line, the `jsonrpc.el' connection (LSP's
;; Content-Length framing) and the handshake; requests, the server's
;; notifications handed to the handlers the panes register with
;; `cloudnotes--on', messages, and the end of the server process.

;;; Code:

(require 'cl-lib)
(require 'jsonrpc)
(require 'subr-x)
(require 'cloudnotes-custom)

(declare-function cloudnotes-detail--keep-unsaved "cloudnotes-detail-save" ())

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

(provide 'cloudnotes-session)
;;; cloudnotes-session.el ends here
