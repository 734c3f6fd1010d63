;;; cloudnotes-tests.el --- ERT tests of cloudnotes.el against the real server  -*- lexical-binding: t; -*-

;; This file is not part of GNU Emacs.

;;; Commentary:

;; Each test starts `cloudnotes serve' ($CLOUDNOTES_BIN) on a temporary
;; store of its own, drives the front end through its commands and
;; buffers, and checks what the buffers show and what the store holds
;; (read back with the `cloudnotes' command line).  Run them with
;; tests/run, or:
;;
;;   CLOUDNOTES_BIN=/path/to/cloudnotes emacs --batch -Q -L clients/emacs \
;;     -l clients/emacs/tests/cloudnotes-tests.el -f ert-run-tests-batch-and-exit
;;
;; No test measures time.  Waits for the server have a generous deadline
;; that only turns a hang into a failure.

;;; Code:

(require 'ert)
(require 'cl-lib)
(require 'subr-x)
(require 'cloudnotes)
(require 'cloudnotes-list)
(require 'cloudnotes-detail)
(require 'cloudnotes-commands)
(require 'cloudnotes-sync)

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
  "Wait until every request sent so far is answered and the list has its rows."
  (dotimes (_ 2)
    ;; Interactive requests are answered in order: once this one is, the
    ;; ones before it are, and their notifications were applied.
    (jsonrpc-request cloudnotes--conn :memo/list '(:offset 0 :limit 1))
    (cloudnotes-test--wait "the list and the saves"
                           (lambda () (and (zerop cloudnotes-list--fetching)
                                           (not (timerp cloudnotes-list--timer))
                                           (not cloudnotes-detail--inflight)
                                           (null cloudnotes-detail--queue))))))

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
         (dolist (name '("*CloudNotes conflict*" "*CloudNotes share*" "*CloudNotes conflicts*"))
           (when (get-buffer name) (kill-buffer name)))
         (delete-directory cloudnotes-test--dir t)))))

(defun cloudnotes-test--no-errors ()
  "Fail if the front end showed an error."
  (should-not cloudnotes--last-error))

;;; Opening

(ert-deftest cloudnotes-test-open-empty-store ()
  "An empty store opens with an empty list and a read-only, cleared detail."
  (cloudnotes-test--session
    (cloudnotes-test--open)
    (should (eq cloudnotes--state 'ready))
    (should (eql cloudnotes-list--total 0))
    (should (equal (cloudnotes-test--rows) nil))
    (should-not cloudnotes-detail--id)
    (with-current-buffer (cloudnotes-detail--buffer)
      (should buffer-read-only)
      (should (equal (buffer-string) "")))
    (should (string-match-p "0 memos" (cloudnotes-list--header)))
    (should (string-match-p "No memo" (cloudnotes-detail--header)))
    (cloudnotes-test--no-errors)))

(ert-deftest cloudnotes-test-open-store-with-memos ()
  "Memos are listed newest first; the newest is selected and shown."
  (cloudnotes-test--session
    (cloudnotes-test--new "First\nthe oldest")
    (cloudnotes-test--new "Second\nin the middle")
    (let ((newest (cloudnotes-test--new "회의록\n참석: 세 명 🙂")))
      (cloudnotes-test--open)
      (should (eql cloudnotes-list--total 3))
      (should (equal (cloudnotes-test--titles) '("회의록" "Second" "First")))
      (should (equal cloudnotes-list--selected-id newest))
      (should (eql cloudnotes-list--selected-index 0))
      (should (equal cloudnotes-detail--id newest))
      (should (equal (cloudnotes-test--detail) "회의록\n참석: 세 명 🙂"))
      (with-current-buffer (cloudnotes-detail--buffer) (should-not buffer-read-only))
      (with-current-buffer (cloudnotes-list--buffer)
        (should (string-match-p "the oldest" (buffer-string)))
        (should (eql (overlay-start cloudnotes-list--overlay) (point-min)))))
    (cloudnotes-test--no-errors)))

;;; Creating and typing

(ert-deftest cloudnotes-test-create ()
  "Create puts an empty memo on top, selects it and shows it editable."
  (cloudnotes-test--session
    (cloudnotes-test--new "Old memo")
    (cloudnotes-test--open)
    (cloudnotes-test--in-list #'cloudnotes-create)
    (cloudnotes-test--settle)
    (should (eql cloudnotes-list--total 2))
    (should (equal (cloudnotes-test--titles) '("New Memo" "Old memo")))
    (should (eql cloudnotes-list--selected-index 0))
    (should (equal cloudnotes-detail--id cloudnotes-list--selected-id))
    (should (equal (cloudnotes-test--detail) ""))
    (with-current-buffer (cloudnotes-detail--buffer) (should-not buffer-read-only))
    (cloudnotes-test--no-errors)))

(ert-deftest cloudnotes-test-typing-is-saved ()
  "Typing, deleting and replacing, in any script, reach the store as memo/edit."
  (cloudnotes-test--session
    (cloudnotes-test--open)
    (cloudnotes-test--in-list #'cloudnotes-create)
    (cloudnotes-test--settle)
    (let ((id cloudnotes-detail--id))
      (dolist (c (string-to-list "Groceries\n"))
        (cloudnotes-test--type (string c)))
      (cloudnotes-test--type "우유 2통, 계란 🥚, café\n")
      (cloudnotes-test--settle)
      (cloudnotes-test--wait "the save" (lambda () (not (cloudnotes-detail--pending-p id))))
      (should (equal (cloudnotes-test--show id) "Groceries\n우유 2통, 계란 🥚, café\n"))
      ;; Delete in the middle (after multibyte text), replace, and type at the start.
      (with-current-buffer (cloudnotes-detail--buffer)
        (goto-char (point-min))
        (search-forward "계란 ")
        (delete-char 1)                 ; the egg, 4 bytes
        (insert "🍞")
        (goto-char (point-min))
        (while (search-forward "café" nil t) (replace-match "tea" t t))
        (goto-char (point-min))
        (insert "* ")
        (goto-char (point-max))
        (delete-char -1)
        (insert "\r\nend"))
      (cloudnotes-save)
      (should (equal (cloudnotes-test--show id) "* Groceries\n우유 2통, 계란 🍞, tea\r\nend"))
      (should (equal (cloudnotes-test--detail) "* Groceries\n우유 2통, 계란 🍞, tea\r\nend"))
      (should (equal (car (cloudnotes-test--titles)) "* Groceries"))
      ;; Saved as edits, not whole texts.
      (should (assoc "memo/edit" cloudnotes-test--requests))
      (should-not (assoc "memo/update" cloudnotes-test--requests))
      (with-current-buffer (cloudnotes-detail--buffer) (should-not (buffer-modified-p))))
    (cloudnotes-test--no-errors)))

(ert-deftest cloudnotes-test-nothing-typed-is-lost ()
  "Text typed just before a select, or before closing, is saved first."
  (cloudnotes-test--session
    (let ((a (cloudnotes-test--new "Memo A"))
          (b (cloudnotes-test--new "Memo B"))
          (cloudnotes-debounce 60)
          (cloudnotes-save-max-delay 60))
      (cloudnotes-test--open)
      (should (equal cloudnotes-detail--id b))
      (cloudnotes-test--type " typed")
      (cloudnotes-test--goto-row 1)
      (cloudnotes-test--in-list #'cloudnotes-select)
      (cloudnotes-test--settle)
      (should (equal cloudnotes-detail--id a))
      (should (equal (cloudnotes-test--show b) "Memo B typed"))
      (cloudnotes-test--type " and this")
      (cloudnotes-quit)
      (should (equal (cloudnotes-test--show a) "Memo A and this")))
    (cloudnotes-test--no-errors)))

;;; Reverting and a server that dies

(ert-deftest cloudnotes-test-revert-drops-unsent-text ()
  "`revert-buffer' drops what was not sent and shows the memo as saved."
  (cloudnotes-test--session
    (let ((id (cloudnotes-test--new "Saved text"))
          (cloudnotes-debounce 600)
          (cloudnotes-save-max-delay 600))
      (cloudnotes-test--open)
      (cloudnotes-test--type " not sent")
      (with-current-buffer (cloudnotes-detail--buffer) (revert-buffer))
      (should (equal (cloudnotes-test--detail) "Saved text"))
      (should-not (cloudnotes-detail--pending-p id))
      (should-not (assoc "memo/edit" cloudnotes-test--requests))
      (cloudnotes-test--type "!")
      (cloudnotes-save)
      (should (equal (cloudnotes-test--show id) "Saved text!")))
    (cloudnotes-test--no-errors)))

(ert-deftest cloudnotes-test-server-killed ()
  "When the server dies, the user is told and text not saved goes to the kill ring."
  (cloudnotes-test--session
    (let ((cloudnotes-debounce 600)
          (cloudnotes-save-max-delay 600))
      (cloudnotes-test--new "Memo")
      (cloudnotes-test--open)
      (cloudnotes-test--type " typed")
      (signal-process cloudnotes--process 'KILL)
      (cloudnotes-test--wait "the server's end" (lambda () (eq cloudnotes--state 'dead)))
      (should (string-match-p "server stopped" cloudnotes--last-error))
      (should (equal (car kill-ring) "Memo typed"))
      (should (equal (cloudnotes-test--detail) "Memo typed"))
      (should (string-match-p "stopped" (cloudnotes-list--header)))
      (should-error (cloudnotes-create) :type 'user-error)
      (cloudnotes-quit)
      (should-not (get-buffer "*CloudNotes*")))))

;;; Deleting and searching

(ert-deftest cloudnotes-test-delete-selects-next ()
  "Deleting the selected memo selects the one now at its place."
  (cloudnotes-test--session
    (cloudnotes-test--new "Third")
    (let ((second (cloudnotes-test--new "Second")))
      (cloudnotes-test--new "First")
      (cloudnotes-test--open)
      (cloudnotes-test--goto-row 1)
      (cloudnotes-test--in-list #'cloudnotes-select)
      (cloudnotes-test--settle)
      (should (equal cloudnotes-detail--id second))
      (cloudnotes-test--in-list #'cloudnotes-delete)
      (cloudnotes-test--settle)
      (should (eql cloudnotes-list--total 2))
      (should (equal (cloudnotes-test--titles) '("First" "Third")))
      (should (eql cloudnotes-list--selected-index 1))
      (should (equal (cloudnotes-test--detail) "Third"))
      (should (eql (cloudnotes-list--point-index) 1))
      (should (string-match-p "No memo" (with-temp-buffer
                                          (call-process cloudnotes-test-bin nil t nil "show" second
                                                        "--store" cloudnotes-store)
                                          (buffer-string)))))
    (cloudnotes-test--no-errors)))

(ert-deftest cloudnotes-test-search ()
  "Search filters the list (any case, Korean too); an empty query clears it."
  (cloudnotes-test--session
    (cloudnotes-test--new "Apple pie\nflour")
    (cloudnotes-test--new "Banana bread")
    (cloudnotes-test--new "장보기\n우유, apple")
    (cloudnotes-test--open)
    (cloudnotes-search "APPLE")
    (cloudnotes-test--settle)
    (should (equal cloudnotes-list--query "APPLE"))
    (should (eql cloudnotes-list--total 2))
    (should (equal (cloudnotes-test--titles) '("장보기" "Apple pie")))
    (should (string-match-p "matching “APPLE”" (cloudnotes-list--header)))
    ;; Through the prompt, as typed.
    (cl-letf (((symbol-function 'read-from-minibuffer) (lambda (&rest _) "우유")))
      (cloudnotes-test--in-list #'call-interactively #'cloudnotes-search))
    (cloudnotes-test--settle)
    (should (equal (cloudnotes-test--titles) '("장보기")))
    (cloudnotes-test--in-list #'cloudnotes-search-clear)
    (cloudnotes-test--settle)
    (should-not cloudnotes-list--query)
    (should (equal (cloudnotes-test--titles) '("장보기" "Banana bread" "Apple pie")))
    (cloudnotes-test--no-errors)))

;;; Changes made elsewhere

(ert-deftest cloudnotes-test-changes-elsewhere-show-up ()
  "A memo created, edited or deleted from the shell shows up by itself."
  (cloudnotes-test--session
    (let ((old (cloudnotes-test--new "Kept\nfirst text")))
      (cloudnotes-test--open)
      (let ((new (cloudnotes-test--new "From the shell\nhello")))
        (cloudnotes-test--wait "the memo from the shell"
                               (lambda () (equal (car (cloudnotes-test--titles)) "From the shell")))
        (should (eql cloudnotes-list--total 2))
        ;; Point stays on the selected memo, now second.
        (cloudnotes-test--settle)
        (should (eql cloudnotes-list--selected-index 1))
        (should (eql (cloudnotes-list--point-index) 1))
        ;; The memo shown, edited elsewhere while not typed in: the detail follows.
        (cloudnotes-test--edit-elsewhere old "Kept\nsecond text")
        (cloudnotes-test--wait "the new text" (lambda () (equal (cloudnotes-test--detail) "Kept\nsecond text")))
        (cloudnotes-test--cli "rm" new)
        (cloudnotes-test--wait "the removal" (lambda () (eql cloudnotes-list--total 1)))
        (should (equal (cloudnotes-test--titles) '("Kept")))
        ;; Typing goes on against the new version.
        (cloudnotes-test--type "!")
        (cloudnotes-save)
        (should (equal (cloudnotes-test--show old) "Kept\nsecond text!"))))
    (cloudnotes-test--no-errors)))

(ert-deftest cloudnotes-test-version-conflict ()
  "A save refused as stale keeps the typed text and shows the server's."
  (cloudnotes-test--session
    (let ((id (cloudnotes-test--new "Shared\nline"))
          (cloudnotes-debounce 600)
          (cloudnotes-save-max-delay 600))
      (cloudnotes-test--open)
      (cloudnotes-test--type " mine")
      (cloudnotes-test--edit-elsewhere id "Shared\nline theirs")
      (cloudnotes-save)
      (cloudnotes-test--settle)
      (should (string-match-p "changed elsewhere" cloudnotes--last-error))
      (should (equal (cloudnotes-test--detail) "Shared\nline theirs"))
      (should (equal (car kill-ring) "Shared\nline mine"))
      (with-current-buffer "*CloudNotes conflict*"
        (should (string-match-p "Shared\nline mine" (buffer-string))))
      (should (eql (gethash id cloudnotes-detail--versions) 2))
      (should (equal (cloudnotes-test--show id) "Shared\nline theirs"))
      ;; Typing goes on from the server's text.
      (setq cloudnotes--last-error nil)
      (cloudnotes-test--type ", merged")
      (cloudnotes-save)
      (should (equal (cloudnotes-test--show id) "Shared\nline theirs, merged")))
    (cloudnotes-test--no-errors)))

;;; Share, export, import, sync

(ert-deftest cloudnotes-test-share ()
  "Share copies the rendered memo to the kill ring and shows it."
  (cloudnotes-test--session
    (cloudnotes-test--new "Reading list\n- SICP")
    (cloudnotes-test--open)
    (cloudnotes-test--in-list #'cloudnotes-share "markdown")
    (cloudnotes-test--settle)
    (should (equal (car kill-ring) "# Reading list\n\n- SICP"))
    (with-current-buffer "*CloudNotes share*"
      (should (equal (buffer-string) "# Reading list\n\n- SICP"))
      (should (string-match-p "Reading list.md" header-line-format)))
    (cloudnotes-test--in-list #'cloudnotes-share "json")
    (cloudnotes-test--settle)
    (should (equal (plist-get (json-parse-string (car kill-ring) :object-type 'plist) :title)
                   "Reading list"))
    (cloudnotes-test--no-errors)))

(ert-deftest cloudnotes-test-export-import ()
  "Export writes every memo to JSON; importing it back adds them again."
  (cloudnotes-test--session
    (cloudnotes-test--new "One")
    (cloudnotes-test--new "Two\nbody")
    (cloudnotes-test--open)
    (let ((file (expand-file-name "export.json" cloudnotes-test--dir))
          (folder (expand-file-name "md" cloudnotes-test--dir)))
      (cloudnotes-export "json" file)
      (cloudnotes-test--wait "the export" (lambda () (file-exists-p file)))
      (cloudnotes-test--settle)
      (let ((entries (with-temp-buffer (insert-file-contents file) (json-parse-buffer :object-type 'plist))))
        (should (equal (mapcar (lambda (e) (plist-get e :text)) entries) '("Two\nbody" "One"))))
      (cloudnotes-export "markdown" folder)
      (cloudnotes-test--wait "the Markdown export"
                             (lambda () (string-match-p "exported 2 memos to .*/md\\'"
                                                        (or cloudnotes--last-message ""))))
      (should (equal (with-temp-buffer (insert-file-contents (expand-file-name "Two.md" folder))
                                       (buffer-string))
                     "Two\nbody"))
      (cloudnotes-import file)
      (cloudnotes-test--wait "the import" (lambda () (string-match-p "imported 2 memos"
                                                                     (or cloudnotes--last-message ""))))
      (cloudnotes-test--settle)
      (should (eql cloudnotes-list--total 4))
      (should (equal (sort (cloudnotes-test--titles) #'string<) '("One" "One" "Two" "Two"))))
    (cloudnotes-test--no-errors)))

(ert-deftest cloudnotes-test-sync-status-and-sync-now ()
  "Sync status says off, then idle after a sync with a folder remote."
  (cloudnotes-test--session
    (cloudnotes-test--new "To publish")
    (cloudnotes-test--open)
    (setq cloudnotes-sync--last-status nil)
    (cloudnotes-sync-status)
    (cloudnotes-test--wait "the status" (lambda () cloudnotes-sync--last-status))
    (should (equal (plist-get cloudnotes-sync--last-status :state) "off"))
    (should (string-match-p "sync off" cloudnotes--last-message))
    (let ((remote (expand-file-name "remote" cloudnotes-test--dir)))
      (make-directory remote)
      (setq cloudnotes-sync--last-status nil)
      (cloudnotes-sync-configure (concat "file://" remote))
      (cloudnotes-test--wait "the remote" (lambda () cloudnotes-sync--last-status))
      (setq cloudnotes-sync--last-status nil)
      (cloudnotes-sync-now)
      (cloudnotes-test--wait "the sync" (lambda () cloudnotes-sync--last-status) 30)
      (should (equal (plist-get cloudnotes-sync--last-status :state) "idle"))
      (should (eql (plist-get cloudnotes-sync--last-status :pendingChanges) 0))
      (should (file-directory-p (expand-file-name "devices" remote))))
    (cloudnotes-test--no-errors)))

(ert-deftest cloudnotes-test-sync-conflict-copies ()
  "The conflicts view shows a memo and the conflict copy a sync made."
  (cloudnotes-test--session
    (let* ((remote (expand-file-name "remote" cloudnotes-test--dir))
           (url (concat "file://" remote))
           (other (expand-file-name "other.sqlite" cloudnotes-test--dir))
           (id (cloudnotes-test--new "Plan\nshared line")))
      (make-directory remote)
      (cloudnotes-test--cli "sync" "--remote" url)
      (let ((cloudnotes-store other)) (cloudnotes-test--cli "sync" "--remote" url))
      (cloudnotes-test--edit-elsewhere id "Plan\nour line")
      (let ((cloudnotes-store other)) (cloudnotes-test--edit-elsewhere id "Plan\ntheir line"))
      (let ((cloudnotes-store other)) (cloudnotes-test--cli "sync"))
      (cloudnotes-test--cli "sync")
      (cloudnotes-test--open)
      (cloudnotes-conflicts)
      (cloudnotes-test--wait "the conflicts"
                             (lambda () (and (get-buffer "*CloudNotes conflicts*")
                                             (with-current-buffer "*CloudNotes conflicts*"
                                               (string-match-p "\\[Delete the copy\\]" (buffer-string))))))
      (with-current-buffer "*CloudNotes conflicts*"
        (should (string-match-p "1 sync conflict\\b" (buffer-string)))
        (should (string-match-p "Conflict copy: Plan" (buffer-string)))
        (should (string-match-p "our line" (buffer-string)))
        (should (string-match-p "their line" (buffer-string)))
        ;; Delete the copy: the conflict is resolved.
        (goto-char (point-min))
        (search-forward "[Delete the copy]")
        (cl-letf (((symbol-function 'y-or-n-p) (lambda (&rest _) t)))
          (push-button (1- (point)))))
      (cloudnotes-test--wait "no conflicts"
                             (lambda () (with-current-buffer "*CloudNotes conflicts*"
                                          (string-match-p "No sync conflicts" (buffer-string)))))
      (should (eql cloudnotes-list--total 1)))
    (cloudnotes-test--no-errors)))

;;; Closing

(ert-deftest cloudnotes-test-close-shuts-the-server-down ()
  "Quit sends shutdown and exit; the server ends with code 0."
  (cloudnotes-test--session
    (cloudnotes-test--open)
    (let ((process cloudnotes--process))
      (cloudnotes-test--in-list #'cloudnotes-quit)
      (should-not (process-live-p process))
      (should (eql cloudnotes--exit-code 0))
      (should (eq cloudnotes--state 'closed))
      (should (assoc "shutdown" cloudnotes-test--requests))
      (should-not (get-buffer "*CloudNotes*"))
      (should-not (get-buffer "*CloudNotes memo*")))
    (cloudnotes-test--no-errors)))

(ert-deftest cloudnotes-test-store-that-cannot-be-opened ()
  "A store the server refuses gives an error naming why, and nothing is left open."
  (cloudnotes-test--session
    (with-temp-file cloudnotes-store (insert "not a database\n"))
    (let ((err (should-error (cloudnotes))))
      (should (string-match-p "not a CloudNotes store" (error-message-string err))))
    (should-not (cloudnotes--running-p))
    (should-not (process-live-p cloudnotes--process))
    (should (eql cloudnotes--exit-code 2))
    (should-not (get-buffer "*CloudNotes*"))
    (let ((cloudnotes-program (expand-file-name "no-such-program" cloudnotes-test--dir)))
      (should-error (cloudnotes) :type 'user-error))))

;;; A large list: only what is shown is fetched

(defun cloudnotes-test--big-store (n)
  "A copy, in the test's folder, of a store of N memos made once per run."
  (let* ((cache (cloudnotes-test--cache-dir))
         (made (expand-file-name (format "store-%d.sqlite" n) cache))
         (copy (expand-file-name "big.sqlite" cloudnotes-test--dir)))
    (unless (file-exists-p made)
      (let ((cloudnotes-store made))
        (cloudnotes-test--cli "import" (cloudnotes-test--import-file n))))
    (dolist (suffix '("" "-wal"))
      (when (file-exists-p (concat made suffix))
        (copy-file (concat made suffix) (concat copy suffix) t)))
    copy))

(ert-deftest cloudnotes-test-100000-memos-open-with-one-screen ()
  "With 100,000 memos, opening fetches about one screen of rows, and so does a jump."
  (cloudnotes-test--session
    (let* ((cloudnotes-store (cloudnotes-test--big-store 100000)))
      (cloudnotes-test--open)
      (let* ((win (get-buffer-window (cloudnotes-list--buffer)))
             (screen (window-body-height win))
             (about-one-screen (+ screen (* 2 cloudnotes-list-prefetch))))
        (should (eql cloudnotes-list--total 100000))
        (should (<= (cloudnotes-test--rows-requested) about-one-screen))
        (should (<= cloudnotes-list--count about-one-screen))
        (should (with-current-buffer (cloudnotes-list--buffer)
                  (eql (count-lines (point-min) (point-max)) 100000)))
        (should (equal (car (cloudnotes-test--titles)) "Memo 99999"))
        (should (equal (cloudnotes-test--detail) "Memo 99999\nBody of memo 99999\nsecond line"))
        ;; Jump to the end: the rows there are fetched, and only those.
        (setq cloudnotes-test--requests nil)
        (with-selected-window win (goto-char (point-max)))
        (cloudnotes-list--schedule)
        (cloudnotes-test--settle)
        (should (<= (cloudnotes-test--rows-requested) (+ about-one-screen 1)))
        (should (equal (car (last (cloudnotes-test--titles))) "Memo 0"))
        ;; And the middle.
        (setq cloudnotes-test--requests nil)
        (with-selected-window win (goto-char (point-min)) (forward-line 50000))
        (cloudnotes-list--schedule)
        (cloudnotes-test--settle)
        (should (<= (cloudnotes-test--rows-requested) (+ about-one-screen 1)))
        (should (equal (plist-get (nth 50000 (cloudnotes-test--rows)) :title) "Memo 49999"))
        (should (<= cloudnotes-list--count (max cloudnotes-list-max-rows about-one-screen)))
        ;; A search asks for one screen too.
        (setq cloudnotes-test--requests nil)
        (cloudnotes-search "memo 4242")
        (cloudnotes-test--settle)
        (should (<= (cloudnotes-test--rows-requested) about-one-screen))
        (should (equal (car (cloudnotes-test--titles)) "Memo 42429"))))
    (cloudnotes-test--no-errors)))

(ert-deftest cloudnotes-test-window-follows-changes-elsewhere ()
  "The rows held stay those of the server's list while other processes change it."
  (cloudnotes-test--session
    (let ((cloudnotes-list-max-rows 40)
          (cloudnotes-store (cloudnotes-test--big-store 250)))
      (cloudnotes-test--open)
      (let ((win (get-buffer-window (cloudnotes-list--buffer))))
        (with-selected-window win (goto-char (point-min)) (forward-line 120))
        (cloudnotes-list--schedule)
        (cloudnotes-test--settle)
        (should (> cloudnotes-list--offset 80))
        (let* ((listed (json-parse-string (cloudnotes-test--cli "list" "--json" "--limit" "1000")
                                          :object-type 'plist))
               (inside (plist-get (aref listed 121) :id))
               (above (plist-get (aref listed 3) :id))
               (below (plist-get (aref listed 240) :id)))
          (should (equal (plist-get (nth 121 (cloudnotes-test--rows)) :id) inside))
          (cloudnotes-test--new "New one")
          (cloudnotes-test--cli "rm" inside)
          (cloudnotes-test--new "New two")
          (cloudnotes-test--cli "rm" above)
          (cloudnotes-test--cli "rm" below)
          (cloudnotes-test--new "New three")
          ;; Three memos above the one selected (the newest of the 250).
          (cloudnotes-test--wait "the changes" (lambda () (and (eql cloudnotes-list--total 250)
                                                               (eql cloudnotes-list--selected-index 3))))
          (cloudnotes-test--settle)
          (let ((server (json-parse-string (cloudnotes-test--cli "list" "--json" "--limit" "1000")
                                           :object-type 'plist))
                (ours (cloudnotes-test--rows)))
            (should (eql (length server) 250))
            (should (eql (length ours) 250))
            (should (> cloudnotes-list--count 0))
            (cl-loop for i from cloudnotes-list--offset
                     below (+ cloudnotes-list--offset cloudnotes-list--count)
                     do (should (equal (plist-get (nth i ours) :id) (plist-get (aref server i) :id))))
            ;; Lines outside the window hold nothing.
            (should (cl-every #'null (cl-subseq ours (+ cloudnotes-list--offset cloudnotes-list--count))))))))
    (cloudnotes-test--no-errors)))

;;; The package itself

(ert-deftest cloudnotes-test-byte-compiles-cleanly ()
  "Every file compiles without a warning."
  (let ((out (make-temp-file "cloudnotes-el-elc-" t))
        (byte-compile-error-on-warn t))
    (unwind-protect
        (let ((byte-compile-dest-file-function
               (lambda (file) (expand-file-name (concat (file-name-nondirectory file) "c") out))))
          (dolist (file (directory-files cloudnotes-test--source-dir t "\\`cloudnotes.*\\.el\\'"))
            (should (eq (byte-compile-file file) t))))
      (delete-directory out t))))

(provide 'cloudnotes-tests)
;;; cloudnotes-tests.el ends here
