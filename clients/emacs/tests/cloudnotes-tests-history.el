;;; cloudnotes-tests-history.el --- ERT tests of the CloudNotes history and trash  -*- lexical-binding: t; -*-

;; This file is not part of GNU Emacs.

;;; Commentary:

;; A memo's versions listed after edits, the diff of the version at point
;; against the current text, restoring one (the buffer and the store),
;; the trash listing a deleted memo, bringing it back, emptying the
;; trash.  The server keeps a version at every change (--version-pause
;; 0).  Loaded by cloudnotes-tests.el.

;;; Code:

(require 'ert)
(require 'cl-lib)
(require 'cloudnotes-test-support)

(defmacro cloudnotes-test--session-keeping-versions (&rest body)
  "Run BODY as `cloudnotes-test--session' does, the server keeping every version."
  (declare (indent 0) (debug t))
  `(cloudnotes-test--session
     (let ((cloudnotes-server-args '("--version-pause" "0")))
       ,@body)))

(defun cloudnotes-test--open-with-two-versions ()
  "Open on a memo made by the shell and saved twice; return its id.
The memo is at its third text and keeps the two before as v2 and v1."
  (let ((id (cloudnotes-test--new "Plan\nstep 1")))
    (cloudnotes-test--open)
    (cloudnotes-test--type-and-save id "\nstep 2" "Plan\nstep 1\nstep 2")
    (cloudnotes-test--type-and-save id "\nstep 3" "Plan\nstep 1\nstep 2\nstep 3")
    id))

(defun cloudnotes-test--buffer-lines (name)
  "The lines of the buffer NAME."
  (with-current-buffer name (split-string (buffer-string) "\n" t)))

(defun cloudnotes-test--history (rows)
  "Open the history from the list and wait until it shows ROWS versions."
  (cloudnotes-test--in-list #'cloudnotes-history)
  (cloudnotes-test--wait "the history"
                         (lambda () (and (get-buffer "*CloudNotes history*")
                                         (eql (length (cloudnotes-test--buffer-lines "*CloudNotes history*"))
                                              rows)))))

(defun cloudnotes-test--wait-diff (regexp)
  "Wait until the diff buffer matches REGEXP."
  (cloudnotes-test--wait (format "a diff matching %S" regexp)
                         (lambda () (and (get-buffer "*CloudNotes diff*")
                                         (with-current-buffer "*CloudNotes diff*"
                                           (string-match-p regexp (buffer-string)))))))

;;; History

(ert-deftest cloudnotes-test-history-lists-versions-and-their-diff ()
  "The history lists the earlier versions, newest first, with the diff of each."
  (cloudnotes-test--session-keeping-versions
    (cloudnotes-test--open-with-two-versions)
    (cloudnotes-test--history 2)
    (let ((lines (cloudnotes-test--buffer-lines "*CloudNotes history*")))
      (should (string-match-p "\\`v2  December .*  edit   Plan +  18 bytes\\'" (nth 0 lines)))
      (should (string-match-p "\\`v1  December .*  shell  Plan +  11 bytes\\'" (nth 1 lines))))
    (with-current-buffer "*CloudNotes history*"
      (should (string-match-p "History of “Plan”: 2 versions" header-line-format))
      (cloudnotes-test--wait-diff "^--- v2 .*\n\\+\\+\\+ current\n@@ -1,3 \\+1,4 @@\n Plan\n step 1\n step 2\n\\+step 3\n")
      (cloudnotes-history-next 1))
    (cloudnotes-test--wait-diff "^--- v1 .*\n\\+\\+\\+ current\n@@ -1,2 \\+1,4 @@\n Plan\n step 1\n\\+step 2\n\\+step 3\n")
    (with-current-buffer "*CloudNotes diff*" (should (eq major-mode 'diff-mode)))
    (cloudnotes-test--no-errors)))

(ert-deftest cloudnotes-test-history-restore ()
  "Restoring a version changes the memo shown and the store, and can be undone."
  (cloudnotes-test--session-keeping-versions
    (let ((id (cloudnotes-test--open-with-two-versions)))
      (cloudnotes-test--history 2)
      (with-current-buffer "*CloudNotes history*"
        (forward-line 1)
        (cloudnotes-history-restore))
      (cloudnotes-test--wait "the restored text" (lambda () (equal (cloudnotes-test--detail) "Plan\nstep 1")))
      (should (equal (cdr (assoc "memo/restore" cloudnotes-test--requests)) (list :id id :version 1 :baseVersion 3)))
      (should (equal (cloudnotes-test--show id) "Plan\nstep 1"))
      (should (string-match-p "restored v1 of “Plan”" cloudnotes--last-message))
      ;; The text it replaced is kept: restoring it undoes the restore.
      (cloudnotes-test--wait "the history with one more version"
                             (lambda () (eql (length (cloudnotes-test--buffer-lines "*CloudNotes history*")) 3)))
      (with-current-buffer "*CloudNotes history*"
        (goto-char (point-min))
        (cloudnotes-history-restore))
      (cloudnotes-test--wait "the restore undone"
                             (lambda () (equal (cloudnotes-test--detail) "Plan\nstep 1\nstep 2\nstep 3")))
      (should (equal (cloudnotes-test--show id) "Plan\nstep 1\nstep 2\nstep 3")))
    (cloudnotes-test--no-errors)))

(ert-deftest cloudnotes-test-history-of-a-memo-without-versions ()
  "A memo with no earlier version says so; there is nothing to restore."
  (cloudnotes-test--session-keeping-versions
    (cloudnotes-test--new "Alone")
    (cloudnotes-test--open)
    (cloudnotes-test--history 1)
    (with-current-buffer "*CloudNotes history*"
      (should (string-match-p "No earlier versions" (buffer-string)))
      (should-error (cloudnotes-history-restore) :type 'user-error))
    (cloudnotes-test--no-errors)))

;;; Trash

(ert-deftest cloudnotes-test-trash-undelete ()
  "A deleted memo is in the trash; bringing it back selects it and clears the search."
  (cloudnotes-test--session
    (let ((groceries (cloudnotes-test--new "Groceries\nmilk")))
      (cloudnotes-test--new "Plan\nstep 1")
      (cloudnotes-test--open)
      (cloudnotes-test--goto-row 1)
      (cloudnotes-test--in-list #'cloudnotes-delete)
      (cloudnotes-search "step")
      (cloudnotes-test--settle)
      (should (equal (cloudnotes-test--titles) '("Plan")))
      (cloudnotes-trash)
      (cloudnotes-test--wait "the trash" (lambda () (get-buffer "*CloudNotes trash*")))
      (with-current-buffer "*CloudNotes trash*"
        (should (string-match-p "\\`  Groceries +  December .*  milk\n\\'" (buffer-string)))
        (should (string-match-p "Trash: 1 memo " header-line-format))
        (goto-char (point-min))
        (cloudnotes-trash-undelete))
      (cloudnotes-test--wait "the memo back" (lambda () (equal cloudnotes-list--selected-id groceries)))
      (cloudnotes-test--settle)
      (should-not cloudnotes-list--query)
      (should (equal (sort (cloudnotes-test--titles) #'string<) '("Groceries" "Plan")))
      (should (equal (cloudnotes-test--detail) "Groceries\nmilk"))
      (should (equal (cloudnotes-test--show groceries) "Groceries\nmilk"))
      (cloudnotes-test--wait "the trash emptied"
                             (lambda () (with-current-buffer "*CloudNotes trash*"
                                          (string-match-p "The trash is empty" (buffer-string))))))
    (cloudnotes-test--no-errors)))

(ert-deftest cloudnotes-test-trash-empty ()
  "Emptying the trash asks first, then purges its memos."
  (cloudnotes-test--session
    (cloudnotes-test--cli "rm" (cloudnotes-test--new "Old"))
    (cloudnotes-test--open)
    (cloudnotes-trash)
    (cloudnotes-test--wait "the trash" (lambda () (get-buffer "*CloudNotes trash*")))
    (with-current-buffer "*CloudNotes trash*"
      (cl-letf (((symbol-function 'yes-or-no-p) #'ignore))
        (cloudnotes-trash-empty))
      (cloudnotes-test--settle)
      (should (string-match-p "Old" (cloudnotes-test--cli "trash")))
      (cl-letf (((symbol-function 'yes-or-no-p) (lambda (prompt) (string-match-p "1 memo will" prompt))))
        (cloudnotes-trash-empty)))
    (cloudnotes-test--wait "the trash emptied"
                           (lambda () (with-current-buffer "*CloudNotes trash*"
                                        (string-match-p "The trash is empty" (buffer-string)))))
    (should (equal (cloudnotes-test--cli "trash") ""))
    (should (string-match-p "purged 1 memo" cloudnotes--last-message))
    (cloudnotes-test--no-errors)))

(provide 'cloudnotes-tests-history)
;;; cloudnotes-tests-history.el ends here
