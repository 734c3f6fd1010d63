;;; cloudnotes.el --- Split-view memo pad on the CloudNotes server  -*- lexical-binding: t; -*-

;; Author: CloudNotes contributors
;; Version: 0.1.0
;; Package-Requires: ((emacs "28.1"))
;; Keywords: convenience, tools

;; This file is not part of GNU Emacs.

;;; Commentary:

;; A front end for the CloudNotes memo server.  `M-x cloudnotes' starts
;; `cloudnotes serve' and opens the split view: the list of memos on the
;; left (title, date and preview, newest first, with a search filter) and
;; the selected memo on the right, where it is edited in place and saved as
;; you type.
;;
;; The server owns the memos, the list's order and filter, and the
;; selection; it says what to show through JSON-RPC notifications, which
;; this package applies.  It speaks JSON-RPC through Emacs's own
;; `jsonrpc.el' (LSP's Content-Length framing).  Changes made elsewhere (in
;; another editor, or with the `cloudnotes' command line) show up by
;; themselves.
;;
;; The list never holds every memo: its buffer has one line per memo, and
;; only the rows around the visible part are fetched (see
;; cloudnotes-list.el), so a store of 100,000 memos opens as fast as one of
;; 1,000.
;;
;; This file holds the entry point, the split view's windows and closing;
;; cloudnotes-custom.el the customization, cloudnotes-session.el the
;; server process and the connection to it; cloudnotes-list.el,
;; cloudnotes-detail.el (with cloudnotes-detail-save.el) and
;; cloudnotes-commands.el hold the two panes and the other commands,
;; cloudnotes-sync.el sync, and cloudnotes-history.el the memos' versions
;; and the trash.  See README.md for the keys.

;;; Code:

(require 'jsonrpc)
(require 'cloudnotes-custom)
(require 'cloudnotes-session)

;;; The split view

(declare-function cloudnotes-list--open "cloudnotes-list" ())
(declare-function cloudnotes-list--buffer "cloudnotes-list" ())
(declare-function cloudnotes-list--kill "cloudnotes-list" ())
(declare-function cloudnotes-detail--buffer "cloudnotes-detail-save" ())
(declare-function cloudnotes-detail--save-sync "cloudnotes-detail-save" (&optional timeout))
(declare-function cloudnotes-detail--keep-unsaved "cloudnotes-detail-save" ())
(declare-function cloudnotes-detail--kill "cloudnotes-detail" ())
(declare-function cloudnotes-detail--reset-state "cloudnotes-detail-save" ())

(defun cloudnotes--pane-buffer (name mode)
  "The buffer NAME of a pane, made and put in MODE (a function) if needed."
  (or (get-buffer name)
      (with-current-buffer (get-buffer-create name)
        (funcall mode)
        (current-buffer))))

(defun cloudnotes--kill-pane (name on-kill)
  "Kill the buffer NAME of a pane, if any, without running its ON-KILL hook."
  (let ((buf (get-buffer name)))
    (when buf
      (with-current-buffer buf (remove-hook 'kill-buffer-hook on-kill t))
      (kill-buffer buf))))

(defun cloudnotes--list-width ()
  "Columns of the list window."
  (or cloudnotes-list-width (max 40 (min 80 (/ (frame-width) 2)))))

(defun cloudnotes--show-windows ()
  "Lay out the list and the detail side by side in the selected frame."
  (delete-other-windows)
  (switch-to-buffer (cloudnotes-list--buffer))
  (let ((width (cloudnotes--list-width)))
    (when (> (window-total-width) (+ width 20))
      (set-window-buffer (split-window-right width) (cloudnotes-detail--buffer)))))

;;; Entry points

;;;###autoload
(defun cloudnotes ()
  "Open the CloudNotes split view: the list of memos and the selected memo.
Start the server first if it is not running."
  (interactive)
  (require 'cloudnotes-list)
  (require 'cloudnotes-detail)
  (require 'cloudnotes-commands)
  (require 'cloudnotes-sync)
  (require 'cloudnotes-history)
  (if (cloudnotes--running-p)
      (cloudnotes--show-windows)
    (when (memq cloudnotes--state '(dead closing))
      (cloudnotes-quit))
    (setq cloudnotes--window-config (current-window-configuration))
    (cloudnotes-list--open)
    (cloudnotes-detail--reset-state)
    (cloudnotes-detail--buffer)
    (cloudnotes--show-windows)
    (condition-case err
        (cloudnotes--start)
      ((error quit)
       (cloudnotes--stop-process)
       (setq cloudnotes--state 'dead)
       (cloudnotes-quit)
       (signal (car err) (cdr err))))
    (run-hooks 'cloudnotes--started-hook)))

(defun cloudnotes-quit ()
  "Close CloudNotes: save what was typed, shut the server down, close its windows."
  (interactive)
  (when (cloudnotes--running-p)
    (cloudnotes-detail--save-sync)
    (setq cloudnotes--state 'closing)
    (condition-case err
        (cloudnotes--request-sync "shutdown" nil 10)
      (error (cloudnotes--error "shutdown: %s" (error-message-string err))))
    (when (jsonrpc-running-p cloudnotes--conn)
      (jsonrpc-notify cloudnotes--conn :exit nil))
    (with-timeout (5 (cloudnotes--stop-process))
      (while (process-live-p cloudnotes--process)
        (accept-process-output cloudnotes--process 0.05))))
  (when (and (memq cloudnotes--state '(dead starting)) (fboundp 'cloudnotes-detail--keep-unsaved)
             (cloudnotes-detail--keep-unsaved))
    (cloudnotes--message "the text that was not saved is in the kill ring"))
  (unless (process-live-p cloudnotes--process)
    (setq cloudnotes--state 'closed))
  (when (fboundp 'cloudnotes-list--kill)
    (cloudnotes-detail--kill)
    (cloudnotes-list--kill))
  (when cloudnotes--conn
    (dolist (buf (list (ignore-errors (jsonrpc-stderr-buffer cloudnotes--conn))
                       (ignore-errors (jsonrpc-events-buffer cloudnotes--conn))
                       (and cloudnotes--process (process-buffer cloudnotes--process))))
      (when (buffer-live-p buf)
        (let ((kill-buffer-query-functions nil)) (kill-buffer buf)))))
  (when (window-configuration-p cloudnotes--window-config)
    (ignore-errors (set-window-configuration cloudnotes--window-config)))
  (setq cloudnotes--window-config nil))

(defun cloudnotes-events ()
  "Show the JSON-RPC events buffer (see `cloudnotes-events-buffer-size')."
  (interactive)
  (cloudnotes--check)
  (display-buffer (jsonrpc-events-buffer cloudnotes--conn)))

(defun cloudnotes--kill-emacs ()
  "Shut the server down when Emacs exits."
  (when (cloudnotes--running-p)
    (ignore-errors (cloudnotes-quit))))

(add-hook 'kill-emacs-hook #'cloudnotes--kill-emacs)

(provide 'cloudnotes)
;;; cloudnotes.el ends here
