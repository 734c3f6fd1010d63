;;; cloudnotes-tests-commands.el --- ERT tests of the CloudNotes commands beyond the panes  -*- lexical-binding: t; -*-

;; This file is not part of GNU Emacs.

;;; Commentary:

;; Share, export and import, sync status, sync now and the conflict
;; copies, closing the session, a store the server refuses, and the
;; package's byte-compilation.  Loaded by cloudnotes-tests.el.

;;; Code:

(require 'ert)
(require 'cl-lib)
(require 'cloudnotes-test-support)

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

(provide 'cloudnotes-tests-commands)
;;; cloudnotes-tests-commands.el ends here
