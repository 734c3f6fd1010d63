;;; cloudnotes-bench.el --- How long opening takes, by store size  -*- lexical-binding: t; -*-

;; This file is not part of GNU Emacs.

;;; Commentary:

;; Times `M-x cloudnotes' on stores of 1,000 and 100,000 memos (or the
;; sizes in $CLOUDNOTES_BENCH_SIZES): from the command to the first screen
;; of rows and the newest memo shown.  The tests check that only one
;; screen is fetched; this prints what it costs.  Run it with tests/bench.

;;; Code:

(require 'cloudnotes-tests)

(defun cloudnotes-bench--open-once (store)
  "Open STORE (a fresh copy each time); return the seconds and rows fetched."
  (let* ((cloudnotes-test--dir (make-temp-file "cloudnotes-el-bench-" t))
         (cloudnotes-store nil) (cloudnotes-program cloudnotes-test-bin)
         (cloudnotes-locale "en-US") (cloudnotes-time-zone "UTC")
         (cloudnotes-test--requests nil)
         (cloudnotes--request-functions (list #'cloudnotes-test--record-request)))
    (unwind-protect
        (progn
          (setq cloudnotes-store (expand-file-name "bench.sqlite" cloudnotes-test--dir))
          (dolist (suffix '("" "-wal"))
            (when (file-exists-p (concat store suffix))
              (copy-file (concat store suffix) (concat cloudnotes-store suffix) t)))
          (let ((start (float-time)))
            (cloudnotes)
            (cloudnotes-test--wait "the first screen"
                                   (lambda () (and cloudnotes-list--total (> cloudnotes-list--count 0)
                                                   cloudnotes-detail--id (zerop cloudnotes-list--fetching)))
                                   60)
            (redisplay t)
            (prog1 (list (- (float-time) start) (cloudnotes-test--rows-requested))
              (cloudnotes-quit))))
      (ignore-errors (cloudnotes-quit))
      (delete-directory cloudnotes-test--dir t))))

(defun cloudnotes-bench-run ()
  "Print the time to open stores of each size."
  (let ((sizes (mapcar #'string-to-number
                       (split-string (or (getenv "CLOUDNOTES_BENCH_SIZES") "1000 100000"))))
        (runs (string-to-number (or (getenv "CLOUDNOTES_BENCH_RUNS") "7"))))
    (dolist (n sizes)
      (let* ((cloudnotes-test--dir (cloudnotes-test--cache-dir))
             (store (cloudnotes-test--big-store n))
             (results (cl-loop repeat runs collect (cloudnotes-bench--open-once store)))
             (times (sort (mapcar #'car results) #'<)))
        (princ (format "%7d memos: open %6.1f ms median, %6.1f min, %6.1f max (%d runs); %d rows fetched\n"
                       n (* 1000 (nth (/ runs 2) times)) (* 1000 (car times)) (* 1000 (car (last times)))
                       runs (cadr (car results))))))))

(provide 'cloudnotes-bench)
;;; cloudnotes-bench.el ends here
