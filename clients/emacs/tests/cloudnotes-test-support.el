;;; cloudnotes-test-support.el --- Helpers of the ERT tests of cloudnotes.el  -*- lexical-binding: t; -*-

;; This file is not part of GNU Emacs.

;;; Commentary:

;; What the tests (cloudnotes-tests.el and the files it loads) share: a
;; session on a fresh store of its own (`cloudnotes-test--session'),
;; waiting for the server, the `cloudnotes' command line on the test's
;; store (to change it from another process and read it back), and
;; reading what the list and the memo buffers show.

;;; Code:

(require 'ert)
(require 'cl-lib)
(require 'subr-x)
(require 'cloudnotes)
(require 'cloudnotes-list)
(require 'cloudnotes-detail)
(require 'cloudnotes-commands)
(require 'cloudnotes-sync)
(require 'cloudnotes-history)

(defvar cloudnotes-test-bin (getenv "CLOUDNOTES_BIN") "The server binary.")
(defvar cloudnotes-test--dir nil "The running test's temporary folder.")
(defvar cloudnotes-test--requests nil "Requests sent in the running test, newest first.")
(defvar cloudnotes-test--cache nil "Folder of files made once per run.")

(defconst cloudnotes-test--source-dir
  (file-name-directory (directory-file-name (file-name-directory (or load-file-name buffer-file-name)))))

(defun cloudnotes-test--cache-dir ()
  "A folder for files shared by the tests of this run, removed at exit."
  (or cloudnotes-test--cache
      (let ((dir (or (getenv "CLOUDNOTES_TEST_CACHE") (make-temp-file "cloudnotes-el-cache-" t))))
        (make-directory dir t)
        (unless (getenv "CLOUDNOTES_TEST_CACHE")
          (add-hook 'kill-emacs-hook (lambda () (delete-directory dir t))))
        (setq cloudnotes-test--cache dir))))

(defun cloudnotes-test--wait (what pred &optional timeout)
  "Process events until PRED is non-nil; fail naming WHAT after TIMEOUT seconds."
  (let ((deadline (+ (float-time) (or timeout 15))))
    (while (and (not (funcall pred)) (< (float-time) deadline))
      (accept-process-output nil 0.02))
    (or (funcall pred) (ert-fail (format "timed out waiting for %s" what)))))

(defun cloudnotes-test--settle ()
  "Wait until every request sent so far is answered and the list has its rows.
Each round sends a request and waits for its answer: interactive requests
are answered in order, so once it is, the ones before it are, and their
notifications were applied.  A round is repeated until the client is idle,
because Emacs 28's jsonrpc.el can hold a response it read during another
request's wait until the server writes again."
  (let ((deadline (+ (float-time) 15)))
    (dotimes (_ 2)
      (while (progn
               (jsonrpc-request cloudnotes--conn :memo/list '(:offset 0 :limit 1))
               (accept-process-output nil 0.02)
               (not (and (zerop cloudnotes-list--fetching)
                         (not (timerp cloudnotes-list--timer))
                         (not cloudnotes-detail--inflight)
                         (null cloudnotes-detail--queue))))
        (when (> (float-time) deadline)
          (ert-fail "timed out waiting for the list and the saves"))))))

(defun cloudnotes-test--cli (&rest args)
  "Run the command line with ARGS on the test's store; return its stdout.
Fail if it exits with another code than 0."
  (with-temp-buffer
    (let ((code (apply #'call-process cloudnotes-test-bin nil (list t nil) nil
                       (append args (list "--store" cloudnotes-store)))))
      (unless (eql code 0)
        (ert-fail (format "cloudnotes %S exited with %s: %s" args code (buffer-string))))
      (buffer-string))))

(defun cloudnotes-test--new (text)
  "Create a memo with TEXT from the shell; return its id."
  (string-trim (cloudnotes-test--cli "new" text)))

(defun cloudnotes-test--show (id)
  "The text of memo ID, read by the command line."
  (cloudnotes-test--cli "show" id))

(defun cloudnotes-test--editor (text)
  "A $VISUAL script that writes TEXT into the file it edits."
  (let ((script (expand-file-name (format "editor-%d" (random 1000000)) cloudnotes-test--dir))
        (data (make-temp-file (expand-file-name "text-" cloudnotes-test--dir) nil nil text)))
    (with-temp-file script
      (insert (format "#!/bin/sh\ncat '%s' > \"$1\"\n" data)))
    (set-file-modes script #o700)
    script))

(defun cloudnotes-test--edit-elsewhere (id text)
  "Replace the text of memo ID with TEXT from another process."
  (let ((process-environment (cons (concat "VISUAL=" (cloudnotes-test--editor text))
                                   process-environment)))
    (cloudnotes-test--cli "edit" id)))

(defun cloudnotes-test--open ()
  "Open the split view and wait for the first screen."
  (cloudnotes)
  (cloudnotes-test--wait "the first page" (lambda () cloudnotes-list--total))
  (cloudnotes-test--settle))

(defun cloudnotes-test--rows ()
  "The rows of the list buffer: a row plist, or nil for a line not held."
  (with-current-buffer (cloudnotes-list--buffer)
    (save-excursion
      (goto-char (point-min))
      (let (rows)
        (while (not (eobp))
          (push (get-text-property (point) 'cloudnotes-row) rows)
          (forward-line 1))
        (nreverse rows)))))

(defun cloudnotes-test--titles ()
  "The titles of the rows held, in order."
  (delq nil (mapcar (lambda (row) (plist-get row :title)) (cloudnotes-test--rows))))

(defun cloudnotes-test--detail ()
  "The text of the detail buffer."
  (with-current-buffer (cloudnotes-detail--buffer) (buffer-string)))

(defun cloudnotes-test--goto-row (index)
  "Put point of the list on row INDEX."
  (with-current-buffer (cloudnotes-list--buffer)
    (cloudnotes-list--goto index)
    (dolist (win (get-buffer-window-list nil nil t)) (set-window-point win (point)))))

(defun cloudnotes-test--in-list (fn &rest args)
  "Call FN with ARGS in the list buffer."
  (with-current-buffer (cloudnotes-list--buffer) (apply fn args)))

(defun cloudnotes-test--type (text &optional pos)
  "Insert TEXT in the detail buffer at POS (default: its end)."
  (with-current-buffer (cloudnotes-detail--buffer)
    (goto-char (or pos (point-max)))
    (insert text)))

(defun cloudnotes-test--type-and-save (id text expected)
  "Type TEXT at the end of memo ID's text, save it, and check the store has EXPECTED."
  (cloudnotes-test--type text)
  (cloudnotes-save)
  (should (equal (cloudnotes-test--show id) expected)))

(defun cloudnotes-test--import-file (n &optional prefix)
  "A JSON import file of N memos titled PREFIX N-1 down to 0, in the cache."
  (let ((file (expand-file-name (format "%s-%d.json" (or prefix "memo") n) (cloudnotes-test--cache-dir))))
    (unless (file-exists-p file)
      (with-temp-file file
        (insert "[")
        (dotimes (i n)
          (insert (if (> i 0) ",\n" "")
                  (json-serialize (list :title (format "%s %d" (or prefix "Memo") i)
                                        :body (format "Body of memo %d\nsecond line" i)
                                        :last_modified (+ 1600000000 (* 60 i))))))
        (insert "]\n")))
    file))

(defun cloudnotes-test--record-request (method params)
  "Note the request METHOD with PARAMS."
  (push (cons method params) cloudnotes-test--requests))

(defun cloudnotes-test--rows-requested ()
  "How many rows the list asked for so far (memo/list and memo/search limits)."
  (cl-loop for (method . params) in cloudnotes-test--requests
           when (member method '("memo/list" "memo/search"))
           sum (or (plist-get params :limit) 100)))

(defmacro cloudnotes-test--session (&rest body)
  "Run BODY with a fresh store and shut the session down after it."
  (declare (indent 0) (debug t))
  `(progn
     (unless (and cloudnotes-test-bin (file-executable-p cloudnotes-test-bin))
       (ert-fail "set CLOUDNOTES_BIN to the cloudnotes binary"))
     (let* ((cloudnotes-test--dir (make-temp-file "cloudnotes-el-" t))
            (cloudnotes-store (expand-file-name "notes.sqlite" cloudnotes-test--dir))
            (cloudnotes-program cloudnotes-test-bin)
            (cloudnotes-locale "en-US")
            (cloudnotes-time-zone "UTC")
            (cloudnotes-confirm-delete nil)
            (cloudnotes-debounce 0.05)
            (cloudnotes-share-action 'both)
            (cloudnotes-test--requests nil)
            (cloudnotes--last-message nil)
            (cloudnotes-sync--last-status nil)
            (cloudnotes--request-functions (list #'cloudnotes-test--record-request))
            (kill-ring nil))
       (unwind-protect
           (progn ,@body)
         (ignore-errors (cloudnotes-quit))
         (dolist (name '("*CloudNotes conflict*" "*CloudNotes share*" "*CloudNotes conflicts*"
                         "*CloudNotes history*" "*CloudNotes diff*" "*CloudNotes trash*"))
           (when (get-buffer name) (kill-buffer name)))
         (delete-directory cloudnotes-test--dir t)))))

(defmacro cloudnotes-test--session-saving-only-when-asked (&rest body)
  "Run BODY as `cloudnotes-test--session' does, typing sent only when asked.
What is typed is sent on save, select, close...: the debounce and its
limit are far longer than any test."
  (declare (indent 0) (debug t))
  `(cloudnotes-test--session
     (let ((cloudnotes-debounce 600)
           (cloudnotes-save-max-delay 600))
       ,@body)))

(defun cloudnotes-test--no-errors ()
  "Fail if the front end showed an error."
  (should-not cloudnotes--last-error))

(provide 'cloudnotes-test-support)
;;; cloudnotes-test-support.el ends here
