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
;;
;; This file has the tests of the two panes and loads the others:
;; cloudnotes-tests-commands.el (share, export, import, sync, closing, the
;; package), cloudnotes-tests-window.el (a large list),
;; cloudnotes-tests-history.el (versions and the trash) and their helpers,
;; cloudnotes-test-support.el, all in this folder.

;;; Code:

(eval-and-compile
  (add-to-list 'load-path (file-name-directory (or load-file-name byte-compile-current-file
                                                   buffer-file-name))))
(require 'cloudnotes-test-support)
(require 'cloudnotes-tests-commands)
(require 'cloudnotes-tests-window)
(require 'cloudnotes-tests-history)

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
  (cloudnotes-test--session-saving-only-when-asked
    (let ((a (cloudnotes-test--new "Memo A"))
          (b (cloudnotes-test--new "Memo B")))
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
  (cloudnotes-test--session-saving-only-when-asked
    (let ((id (cloudnotes-test--new "Saved text")))
      (cloudnotes-test--open)
      (cloudnotes-test--type " not sent")
      (with-current-buffer (cloudnotes-detail--buffer) (revert-buffer))
      (should (equal (cloudnotes-test--detail) "Saved text"))
      (should-not (cloudnotes-detail--pending-p id))
      (should-not (assoc "memo/edit" cloudnotes-test--requests))
      (cloudnotes-test--type-and-save id "!" "Saved text!"))
    (cloudnotes-test--no-errors)))

(ert-deftest cloudnotes-test-server-killed ()
  "When the server dies, the user is told and text not saved goes to the kill ring."
  (cloudnotes-test--session-saving-only-when-asked
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
    (should-not (get-buffer "*CloudNotes*"))))

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
        (cloudnotes-test--type-and-save old "!" "Kept\nsecond text!")))
    (cloudnotes-test--no-errors)))

(ert-deftest cloudnotes-test-version-conflict ()
  "A save refused as stale keeps the typed text and shows the server's."
  (cloudnotes-test--session-saving-only-when-asked
    (let ((id (cloudnotes-test--new "Shared\nline")))
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
      (cloudnotes-test--type-and-save id ", merged" "Shared\nline theirs, merged"))
    (cloudnotes-test--no-errors)))

(provide 'cloudnotes-tests)
;;; cloudnotes-tests.el ends here
