;;; session.el --- Emacs's own jsonrpc.el drives one CloudNotes session  -*- lexical-binding: t; -*-

;; Run by test_editor_clients.py:
;;   emacs --batch -Q -l session.el
;; with $CLOUDNOTES_SESSION naming the session plan: {command, steps, timeoutSeconds}, where each step is
;; {request: method, params: ...} or {notify: method, params: ...}, and timeoutSeconds is how long to wait
;; for each answer and for the server to exit.  It spawns the server as Eglot does (`make-process' with a
;; pipe, stderr in its own buffer, never mixed into stdout), wraps it in a `jsonrpc-process-connection',
;; sends the steps in order with `jsonrpc-request' and `jsonrpc-notify'
;; (methods as keywords: `:memo/create' is sent as "memo/create"), and writes to $CLOUDNOTES_REPORT, in
;; the order jsonrpc.el delivered them: every notification (the notification dispatcher), every response
;; (what `jsonrpc-request' returned or signalled) and the server's exit code.  The test checks the report.
;;
;; Written against Emacs 28.2's jsonrpc.el 1.0.14, which reads objects as plists, null as nil and false
;; as :json-false, and sends nil params as "params":null.  The plan is read with hash tables, so that an
;; empty {} stays {} when sent.
;;
;; Emacs exits 0 when every request was answered and the server exited, and 1 otherwise.

;;; Code:

(require 'jsonrpc)
(require 'seq)

(defvar cloudnotes-session-events nil
  "What the client delivered, newest first, as plists for the report.")

(defun cloudnotes-session--record (&rest event)
  (push event cloudnotes-session-events))

(defun cloudnotes-session--read-plan (file)
  (with-temp-buffer
    (let ((coding-system-for-read 'utf-8-unix))
      (insert-file-contents file))
    (json-parse-buffer :object-type 'hash-table :null-object nil :false-object :json-false)))

(defun cloudnotes-session--write-report (file failure)
  (let ((coding-system-for-write 'utf-8-unix)
        (report `(:events ,(vconcat (reverse cloudnotes-session-events)) :failure ,failure)))
    (with-temp-file file
      (insert (json-serialize report :null-object nil :false-object :json-false)))))

(defun cloudnotes-session--spawn (command)
  "Start COMMAND as Eglot does: a pipe, and stderr in a buffer of its own."
  (make-process :name "cloudnotes"
                :command command
                :connection-type 'pipe
                :coding 'utf-8-emacs-unix
                :noquery t
                ;; jsonrpc.el takes over the buffer named "*NAME stderr*".
                :stderr (get-buffer-create "*cloudnotes stderr*")))

(defun cloudnotes-session--connect (process)
  "A `jsonrpc-process-connection' to PROCESS that records notifications."
  (make-instance 'jsonrpc-process-connection
                 :name "cloudnotes"
                 :process process
                 :notification-dispatcher
                 (lambda (_connection method params)
                   (cloudnotes-session--record :notification (symbol-name method) :params params))))

(defun cloudnotes-session--run-step (connection step timeout)
  (let ((params (gethash "params" step))
        (notification (gethash "notify" step))
        (method (gethash "request" step)))
    (if notification
        (jsonrpc-notify connection (intern (concat ":" notification)) params)
      (condition-case err
          (cloudnotes-session--record
           :response method
           :result (jsonrpc-request connection (intern (concat ":" method)) params
                                    :timeout timeout))
        (jsonrpc-error
         (let ((code (alist-get 'jsonrpc-error-code (cdr err)))
               (message (alist-get 'jsonrpc-error-message (cdr err))))
           (unless code                 ; no answer: jsonrpc.el's own "Timed out"
             (error "No answer to %s: %s" method message))
           (cloudnotes-session--record
            :response method
            :error `(:code ,code :message ,message
                           :data ,(alist-get 'jsonrpc-error-data (cdr err))))))))))

(defun cloudnotes-session--run (plan)
  (let* ((timeout (gethash "timeoutSeconds" plan))
         (process (cloudnotes-session--spawn (append (gethash "command" plan) nil)))
         (connection (cloudnotes-session--connect process)))
    (seq-doseq (step (gethash "steps" plan))
      (cloudnotes-session--run-step connection step timeout))
    (with-timeout (timeout (error "The server did not exit within %s s" timeout))
      (while (process-live-p process)
        (accept-process-output nil 0.1)))
    (cloudnotes-session--record :exit (process-exit-status process)
                                :status (symbol-name (process-status process)))))

(let ((failure nil))
  (condition-case err
      (cloudnotes-session--run (cloudnotes-session--read-plan (getenv "CLOUDNOTES_SESSION")))
    (error (setq failure (error-message-string err))))
  (cloudnotes-session--write-report (getenv "CLOUDNOTES_REPORT") failure)
  (kill-emacs (if failure 1 0)))

;;; session.el ends here
