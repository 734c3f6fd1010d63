;;; cloudnotes-bench.el --- The Emacs driver of bench/frontend.py  -*- lexical-binding: t; -*-

;; This file is not part of GNU Emacs.

;;; Commentary:

;; bench/frontend.py (bench/frontend_emacs.py) loads this file into
;; `emacs -nw -Q' on a pseudo-terminal of 200x50, with $CN_FRONTEND the
;; JSON {bin, store, n, out, timeout_s}.  Once Emacs is up it runs
;; `M-x cloudnotes' on the store of n memos and measures, as the Neovim
;; driver does:
;;
;;   first_screen_ms  from `(cloudnotes)' to the lines of the list
;;                    window's first screen holding rows (not blank),
;;                    then redisplayed;
;;   scroll_end_ms    once the list has its n lines and the selection:
;;                    from `M->' put into the command loop as a key (it
;;                    runs `cloudnotes-list-last' and `post-command-hook')
;;                    to point on the last row and the last screen of
;;                    lines holding rows, redisplayed;
;;   rss_kb           Emacs's VmHWM after that;
;;
;; writes them to `out' as JSON (with `error' set if something failed),
;; and exits; with `warmup' set (an untimed first run), once the native
;; compilations Emacs started in the background are done (see
;; bench/frontend_emacs.py).  Everything is driven from timers, so that
;; the server's answers, the key and the redisplays go through Emacs's
;; command loop as in a user's session.  Not batch mode: there Emacs never
;; redisplays, so window starts never move and no screen is ever drawn.

;;; Code:

(require 'cloudnotes)
(require 'cloudnotes-list)

(defvar cloudnotes-bench--cfg (json-parse-string (or (getenv "CN_FRONTEND") "{}")
                                                 :object-type 'plist)
  "The run's configuration.")
(defvar cloudnotes-bench--result nil "The figures, a plist.")

(defun cloudnotes-bench--finish (err)
  "Write the result (with the error ERR, or nil) and exit."
  (when err (setq cloudnotes-bench--result (plist-put cloudnotes-bench--result :error err)))
  (with-temp-file (plist-get cloudnotes-bench--cfg :out)
    (insert (json-serialize cloudnotes-bench--result)))
  (if (plist-get cloudnotes-bench--cfg :warmup)
      (run-at-time 0.5 nil #'cloudnotes-bench--exit-when-compiled)
    (kill-emacs 0)))

(defvar comp-files-queue)
(declare-function comp-async-runnings "comp" ())

(defun cloudnotes-bench--exit-when-compiled ()
  "Exit once the native compilations started in the background are done."
  (if (and (fboundp 'comp-async-runnings) (or comp-files-queue (> (comp-async-runnings) 0)))
      (run-at-time 0.1 nil #'cloudnotes-bench--exit-when-compiled)
    (kill-emacs 0)))

(defun cloudnotes-bench--status (key)
  "The number after KEY in /proc/self/status (kB)."
  (with-temp-buffer
    (insert-file-contents "/proc/self/status")
    (and (re-search-forward (concat "^" key ":[ \t]+\\([0-9]+\\)") nil t)
         (string-to-number (match-string 1)))))

(defun cloudnotes-bench--drawn (from to)
  "Non-nil if lines FROM to TO (0-based, TO excluded) of the list hold rows."
  (with-current-buffer (cloudnotes-list--buffer)
    (save-excursion
      ;; From the nearer end: a line's position costs a scan of the lines before it.
      (if (< from (/ cloudnotes-list--total 2))
          (progn (goto-char (point-min)) (forward-line from))
        (goto-char (point-max))
        (forward-line (- from cloudnotes-list--total)))
      (let ((ok t) (i from))
        (while (and ok (< i to))
          (setq ok (and (not (eobp))
                        (re-search-forward "\\S-" (line-end-position) t)
                        (zerop (forward-line 1)))
                i (1+ i)))
        ok))))

(defun cloudnotes-bench--poll (pred then &optional deadline)
  "Call PRED every millisecond until it holds, or fail after DEADLINE.
Then redisplay and call THEN with the time."
  (let ((deadline (or deadline (+ (float-time) (plist-get cloudnotes-bench--cfg :timeout_s)))))
    (run-at-time 0.001 nil
                 (lambda ()
                   (condition-case err
                       (cond ((eq cloudnotes--state 'dead)
                              (cloudnotes-bench--finish
                               (format "the session died: %s" cloudnotes--last-error)))
                             ((funcall pred)
                              (redisplay)
                              (funcall then (float-time)))
                             ((> (float-time) deadline) (cloudnotes-bench--finish "timed out"))
                             (t (cloudnotes-bench--poll pred then deadline)))
                     (error (cloudnotes-bench--finish (format "error: %S" err))))))))

(defun cloudnotes-bench--run ()
  "Open the list, jump to its end, write the figures and exit."
  (setq cloudnotes-program (plist-get cloudnotes-bench--cfg :bin)
        cloudnotes-store (plist-get cloudnotes-bench--cfg :store)
        cloudnotes-locale "en-US" cloudnotes-time-zone "UTC")
  (let ((n (plist-get cloudnotes-bench--cfg :n)) (win nil) (height nil) (t0 (float-time)))
    (cloudnotes)
    (cloudnotes-bench--poll
     (lambda ()
       (setq win (get-buffer-window (cloudnotes-list--buffer)))
       (and win cloudnotes-list--total
            (cloudnotes-bench--drawn 0 (min (setq height (window-body-height win)) n))))
     (lambda (t1)
       (setq cloudnotes-bench--result (list :first_screen_ms (* 1000 (- t1 t0)) :window_lines height))
       ;; M-> once the buffer has a line per memo and the selection came (before it, the list
       ;; would move point back to the selected row).
       (cloudnotes-bench--poll
        (lambda () (and (eql cloudnotes-list--total n) cloudnotes-list--selected-index
                        (not cloudnotes-list--follow)))
        (lambda (t2)
          (setq cloudnotes-bench--result
                (append cloudnotes-bench--result
                        (list :full_length_ms (* 1000 (- t2 t0))
                              :rss_open_kb (cloudnotes-bench--status "VmRSS"))))
          (select-window win)
          (let ((t3 (float-time)))
            (setq unread-command-events (listify-key-sequence (kbd "M->")))
            (cloudnotes-bench--poll
             (lambda ()
               (and (with-current-buffer (window-buffer win) ; point on the last row
                      (save-excursion (goto-char (window-point win))
                                      (and (zerop (forward-line 1)) (eobp))))
                    (cloudnotes-bench--drawn (max 0 (- n (window-body-height win))) n)))
             (lambda (t4)
               (setq cloudnotes-bench--result
                     (append cloudnotes-bench--result
                             (list :scroll_end_ms (* 1000 (- t4 t3))
                                   :rss_kb (cloudnotes-bench--status "VmHWM"))))
               (cloudnotes-bench--finish nil))))))))))

;; Once Emacs is up, from the command loop.
(add-hook 'emacs-startup-hook
          (lambda ()
            (run-at-time 0 nil (lambda ()
                                 (condition-case err (cloudnotes-bench--run)
                                   (error (cloudnotes-bench--finish (format "error: %S" err))))))))

(provide 'cloudnotes-bench)
;;; cloudnotes-bench.el ends here
