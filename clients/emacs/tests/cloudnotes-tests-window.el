;;; cloudnotes-tests-window.el --- ERT tests of CloudNotes on a large list  -*- lexical-binding: t; -*-

;; This file is not part of GNU Emacs.

;;; Commentary:

;; On stores of many memos (made once per run): only about a screen of
;; rows is fetched at a time, and the rows held stay the server's while
;; other processes change the list.  Loaded by cloudnotes-tests.el.

;;; Code:

(require 'ert)
(require 'cl-lib)
(require 'cloudnotes-test-support)

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

(provide 'cloudnotes-tests-window)
;;; cloudnotes-tests-window.el ends here
