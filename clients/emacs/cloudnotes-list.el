;;; cloudnotes-list.el --- The list pane of CloudNotes  -*- lexical-binding: t; -*-

;; This file is not part of GNU Emacs.

;;; Commentary:

;; The list of memos, as a window of the server's list (protocol §7, "A
;; window of the list").  The buffer has one line per memo of the
;; (filtered) list, `cloudnotes-list--total' lines in all, so that scroll
;; bars, `M->', `goto-line' and the like work as in any buffer.  Only the
;; lines of a window, `cloudnotes-list--offset' to `cloudnotes-list--offset'
;; + `cloudnotes-list--count', hold a row; the others are blank until they
;; are shown.  The notifications are applied to the lines as they arrive;
;; after them, and after each command or scroll, the rows of the visible
;; part that are missing are fetched with `memo/list' (one request at a
;; time, coalesced by a timer), and rows far from it are dropped.

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'cloudnotes)

(declare-function cloudnotes-list-mode "cloudnotes-commands" ())

(defvar cloudnotes-list--total nil "Rows in the (filtered) list; nil before the first page.")
(defvar cloudnotes-list--offset 0 "Index of the first row held.")
(defvar cloudnotes-list--count 0 "Number of rows held, from `cloudnotes-list--offset'.")
(defvar cloudnotes-list--query nil "The search filter, or nil.")
(defvar cloudnotes-list--selected-id nil "The selected memo's id, or nil.")
(defvar cloudnotes-list--selected-index nil "The selected memo's index, or nil.")
(defvar cloudnotes-list--fetching 0 "Number of `memo/list' requests on their way.")
(defvar cloudnotes-list--timer nil "Timer of the coalesced visible-rows check.")
(defvar cloudnotes-list--follow nil "Non-nil: move point to the selection when it changes.")
(defvar cloudnotes-list--sync-state nil "The sync state of the last `sync/didChange'.")
(defvar cloudnotes-list--overlay nil "The selected row's overlay.")
(defvar cloudnotes-list--marker nil "The overlay showing \">\" before the selected row.")

(defconst cloudnotes-list--buffer-name "*CloudNotes*")

(defun cloudnotes-list--buffer ()
  "The list buffer, made if needed."
  (cloudnotes--pane-buffer cloudnotes-list--buffer-name #'cloudnotes-list-mode))

(defun cloudnotes-list--open ()
  "Forget the previous session's list and make the buffer."
  (setq cloudnotes-list--total nil cloudnotes-list--offset 0 cloudnotes-list--count 0
        cloudnotes-list--query nil cloudnotes-list--selected-id nil
        cloudnotes-list--selected-index nil cloudnotes-list--fetching 0
        cloudnotes-list--follow t cloudnotes-list--sync-state nil)
  (with-current-buffer (cloudnotes-list--buffer)
    (let ((inhibit-read-only t)) (erase-buffer))))

(defun cloudnotes-list--kill ()
  "Kill the list buffer."
  (when (timerp cloudnotes-list--timer) (cancel-timer cloudnotes-list--timer))
  (setq cloudnotes-list--timer nil)
  (cloudnotes--kill-pane cloudnotes-list--buffer-name #'cloudnotes-list--killed))

(defun cloudnotes-list--killed ()
  "The list buffer is being killed: close the session."
  (when (cloudnotes--running-p)
    (run-at-time 0 nil #'cloudnotes-quit)))

;;; Lines

(defun cloudnotes-list--fit (text width)
  "TEXT on one line, cut or padded to WIDTH columns."
  (truncate-string-to-width
   (replace-regexp-in-string "[[:cntrl:]]" " " (or text "")) width nil ?\s "…"))

(defun cloudnotes-list--row-line (row)
  "The line showing ROW, with its newline."
  (let ((line (concat "  "
                      (propertize (cloudnotes-list--fit (plist-get row :title) cloudnotes-title-width)
                                  'face 'cloudnotes-title)
                      (if (> cloudnotes-date-width 0)
                          (concat "  " (propertize (cloudnotes-list--fit (plist-get row :displayDate)
                                                                         cloudnotes-date-width)
                                                   'face 'cloudnotes-date))
                        "")
                      "  "
                      (propertize (replace-regexp-in-string
                                   "[[:cntrl:]]" " " (or (plist-get row :preview) ""))
                                  'face 'cloudnotes-preview)
                      "\n")))
    (add-text-properties 0 (length line)
                         (list 'cloudnotes-id (plist-get row :id) 'cloudnotes-row row)
                         line)
    line))

(defun cloudnotes-list--goto (index)
  "Move to the start of line INDEX (0-based)."
  (goto-char (point-min))
  (forward-line index))

(defun cloudnotes-list--index-at (pos)
  "The index of the line at POS."
  (save-excursion (goto-char pos) (1- (line-number-at-pos nil t))))

(defun cloudnotes-list--places ()
  "Where point and the list's windows are, as line indexes and columns."
  (cons (list nil (cloudnotes-list--index-at (point)) (current-column) nil)
        (mapcar (lambda (win)
                  (list win (cloudnotes-list--index-at (window-point win))
                        (save-excursion (goto-char (window-point win)) (current-column))
                        (cloudnotes-list--index-at (window-start win))))
                (get-buffer-window-list (current-buffer) nil t))))

(defun cloudnotes-list--restore (places map)
  "Put point and the windows back at PLACES, their indexes moved by MAP.
MAP is called with an index and whether it is a window's start."
  (let ((last (max 0 (1- (or cloudnotes-list--total 0)))))
    (pcase-dolist (`(,win ,index ,column ,start) (cdr places))
      (cloudnotes-list--goto (min last (funcall map start t)))
      (set-window-start win (point) t)
      (cloudnotes-list--goto (min last (funcall map index nil)))
      (move-to-column column)
      (set-window-point win (point)))
    (pcase-let ((`(,_ ,index ,column ,_) (car places)))
      (cloudnotes-list--goto (min last (funcall map index nil)))
      (move-to-column column))))

(defmacro cloudnotes-list--keeping-places (map &rest body)
  "Run BODY, which edits the list's lines; then put point and windows back.
MAP tells where the line at an index went (see `cloudnotes-list--restore')."
  (declare (indent 1) (debug t))
  `(with-current-buffer (cloudnotes-list--buffer)
     (let ((places (cloudnotes-list--places)))
       (with-silent-modifications ,@body)
       (cloudnotes-list--restore places ,map))))

(defun cloudnotes-list--edit-lines (index n lines)
  "Replace N lines from INDEX with the string LINES."
  (cloudnotes-list--goto index)
  (delete-region (point) (progn (forward-line n) (point)))
  (insert lines))

(defun cloudnotes-list--set-lines (index n lines)
  "Replace N lines from INDEX with N lines LINES, keeping point and windows."
  (cloudnotes-list--keeping-places (lambda (i _) i)
    (cloudnotes-list--edit-lines index n lines)))

(defun cloudnotes-list--insert-map (index)
  "Where lines go when one is inserted at INDEX.
The rows keep point; a window starting at INDEX shows the new row."
  (lambda (i start) (if (or (> i index) (and (= i index) (not start))) (1+ i) i)))

(defun cloudnotes-list--remove-map (index)
  "Where lines go when the one at INDEX is removed."
  (lambda (i _) (if (> i index) (1- i) i)))

(defun cloudnotes-list--move-map (from to)
  "Where lines go when the row at FROM moves to TO; point follows that row."
  (let ((remove (cloudnotes-list--remove-map from))
        (insert (cloudnotes-list--insert-map to)))
    (lambda (i start)
      (if (and (= i from) (not start)) to
        (funcall insert (funcall remove i start) start)))))

(defun cloudnotes-list--blank (index n)
  "Make N lines from INDEX blank (rows not held)."
  (when (> n 0)
    (cloudnotes-list--set-lines index n (make-string n ?\n))))

(defun cloudnotes-list--id-at-index (index)
  "The memo id on line INDEX, or nil if the row is not held."
  (with-current-buffer (cloudnotes-list--buffer)
    (save-excursion (cloudnotes-list--goto index)
                    (and (not (eobp)) (get-text-property (point) 'cloudnotes-id)))))

;;; Applying the notifications (protocol §7, "A window of the list")

(defun cloudnotes-list--reset (total)
  "The whole list changed and has TOTAL rows: blank every line."
  (setq cloudnotes-list--total total cloudnotes-list--offset 0 cloudnotes-list--count 0)
  (with-current-buffer (cloudnotes-list--buffer)
    (cloudnotes-list--keeping-places (lambda (i _) i)
      (erase-buffer)
      (insert (make-string total ?\n))))
  (cloudnotes-list--changed))

(defun cloudnotes-list--insert (index row)
  "ROW entered the list at INDEX."
  (cond
   ((null cloudnotes-list--total))      ; the first page, on its way, will include it
   ((not (<= 0 index cloudnotes-list--total)) (cloudnotes-list--refresh))
   (t
    (cl-incf cloudnotes-list--total)
    (let ((end (+ cloudnotes-list--offset cloudnotes-list--count)))
      (cond ((< index cloudnotes-list--offset)
             (cl-incf cloudnotes-list--offset)
             (cloudnotes-list--edit-lines index 0 "\n"))
            ((<= index end)
             (cl-incf cloudnotes-list--count)
             (cloudnotes-list--edit-lines index 0 (cloudnotes-list--row-line row)))
            (t (cloudnotes-list--edit-lines index 0 "\n")))))))

(defun cloudnotes-list--remove (index id)
  "The row at INDEX (memo ID) left the list."
  (cond
   ((null cloudnotes-list--total))
   ((or (not (< -1 index cloudnotes-list--total))
        (let ((held (cloudnotes-list--id-at-index index)))
          (and held (not (equal held id)))))
    (cloudnotes-list--refresh))
   (t
    (cl-decf cloudnotes-list--total)
    (cond ((< index cloudnotes-list--offset) (cl-decf cloudnotes-list--offset))
          ((< index (+ cloudnotes-list--offset cloudnotes-list--count))
           (cl-decf cloudnotes-list--count)))
    (cloudnotes-list--edit-lines index 1 ""))))

(defun cloudnotes-list--apply (map change)
  "Call CHANGE, which edits the list's lines as a row moves; then follow it.
Point and the windows stay on their rows: MAP tells where the line at an
index went (see `cloudnotes-list--restore')."
  (cloudnotes-list--keeping-places map (funcall change))
  (cloudnotes-list--changed))

(cloudnotes--on "list/didInsert"
                (lambda (p)
                  (let ((index (plist-get p :index)))
                    (cloudnotes-list--apply (cloudnotes-list--insert-map index)
                                            (lambda () (cloudnotes-list--insert index (plist-get p :row)))))))

(cloudnotes--on "list/didRemove"
                (lambda (p)
                  (let ((index (plist-get p :index)))
                    (cloudnotes-list--apply (cloudnotes-list--remove-map index)
                                            (lambda () (cloudnotes-list--remove index (plist-get p :id)))))))

(cloudnotes--on "list/didUpdate"
                (lambda (p)
                  (let ((row (plist-get p :row))
                        (from (plist-get p :fromIndex))
                        (to (plist-get p :toIndex)))
                    (cloudnotes-list--apply (cloudnotes-list--move-map from to)
                                            (lambda ()
                                              (cloudnotes-list--remove from (plist-get row :id))
                                              (cloudnotes-list--insert to row))))))

(cloudnotes--on "list/didReset"
                (lambda (p) (cloudnotes-list--reset (plist-get p :total))))

(cloudnotes--on "selection/didChange"
                (lambda (p)
                  (let ((at-selection (equal (cloudnotes-list--point-index)
                                             cloudnotes-list--selected-index)))
                    (setq cloudnotes-list--selected-id (plist-get p :id)
                          cloudnotes-list--selected-index (plist-get p :index))
                    (when at-selection (setq cloudnotes-list--follow t)))
                  (cloudnotes-list--changed)))

(defun cloudnotes-list--point-index ()
  "The index of the line at the list window's point."
  (let* ((buf (cloudnotes-list--buffer)) (win (get-buffer-window buf t)))
    (with-current-buffer buf
      (cloudnotes-list--index-at (if win (window-point win) (point))))))

(defun cloudnotes-list--point-to-selection ()
  "Move point in the list, and in its windows, to the selected row."
  (let ((index cloudnotes-list--selected-index)
        (buf (cloudnotes-list--buffer)))
    (when (and index cloudnotes-list--total (< index cloudnotes-list--total))
      (setq cloudnotes-list--follow nil)
      (with-current-buffer buf
        (cloudnotes-list--goto index)
        (dolist (win (get-buffer-window-list buf nil t))
          (set-window-point win (point)))))))

(defun cloudnotes-list--changed ()
  "After a change of the list: mark the selection, check the rows shown."
  (when cloudnotes-list--follow (cloudnotes-list--point-to-selection))
  (cloudnotes-list--mark-selection)
  (cloudnotes-list--schedule)
  (force-mode-line-update t))

(defun cloudnotes-list--mark-selection ()
  "Highlight the selected row and mark it with \">\"."
  (with-current-buffer (cloudnotes-list--buffer)
    (unless (overlayp cloudnotes-list--overlay)
      (setq cloudnotes-list--overlay (make-overlay 1 1)
            cloudnotes-list--marker (make-overlay 1 1))
      (overlay-put cloudnotes-list--overlay 'face 'cloudnotes-selected)
      (overlay-put cloudnotes-list--marker 'display ">"))
    (let ((index cloudnotes-list--selected-index))
      (if (and index cloudnotes-list--total (< index cloudnotes-list--total))
          (save-excursion
            (cloudnotes-list--goto index)
            (move-overlay cloudnotes-list--overlay (point) (line-beginning-position 2))
            (move-overlay cloudnotes-list--marker (point) (min (1+ (point)) (line-end-position))))
        (delete-overlay cloudnotes-list--overlay)
        (delete-overlay cloudnotes-list--marker)))))

;;; Fetching the rows shown

(defun cloudnotes-list--schedule ()
  "Check the visible rows soon, once for a burst of changes."
  (unless (timerp cloudnotes-list--timer)
    (setq cloudnotes-list--timer
          (run-at-time 0 nil (lambda ()
                               (setq cloudnotes-list--timer nil)
                               (cloudnotes--safely "list" (cloudnotes-list--ensure-visible)))))))

(defun cloudnotes-list--visible ()
  "The indexes (START . END) of the rows the list window shows."
  (let* ((buf (cloudnotes-list--buffer))
         (win (get-buffer-window buf t))
         (total cloudnotes-list--total))
    (if (not win)
        (cons 0 (min total 40))
      (with-current-buffer buf
        (let* ((height (max 1 (window-body-height win)))
               (start (cloudnotes-list--index-at (window-start win)))
               (pt (cloudnotes-list--index-at (window-point win))))
          ;; Before redisplay the window start can be stale: follow point.
          (unless (and (<= start pt) (< pt (+ start height)))
            (setq start (max 0 (- pt (/ height 2)))))
          (setq start (max 0 (min start (- total height))))
          (cons start (min total (+ start height))))))))

(defun cloudnotes-list--ensure-visible ()
  "Fetch the rows of the visible part that are not held; drop far rows."
  (when (and cloudnotes-list--total (zerop cloudnotes-list--fetching) (cloudnotes--running-p))
    (pcase-let ((`(,vs . ,ve) (cloudnotes-list--visible)))
      (cloudnotes-list--trim vs ve)
      (let ((have-start cloudnotes-list--offset)
            (have-end (+ cloudnotes-list--offset cloudnotes-list--count)))
        (unless (or (>= vs ve) (and (<= have-start vs) (<= ve have-end)))
          (let ((from (max 0 (- vs cloudnotes-list-prefetch)))
                (to (min cloudnotes-list--total (+ ve cloudnotes-list-prefetch))))
            (if (and (> cloudnotes-list--count 0) (<= from have-end) (<= have-start to))
                ;; Overlapping: fetch only what is missing on either side.
                (progn (when (< from have-start) (cloudnotes-list--fetch from (- have-start from)))
                       (when (> to have-end) (cloudnotes-list--fetch have-end (- to have-end))))
              (cloudnotes-list--fetch from (- to from)))))))))

(defun cloudnotes-list--fetch (offset limit &optional then)
  "Fetch LIMIT rows from OFFSET with `memo/list'; then call THEN."
  (while (> limit 0)
    (let ((n (min limit 1000)) (at offset))
      (cl-incf cloudnotes-list--fetching)
      (cloudnotes--request "memo/list" (list :offset at :limit n)
                           :then (lambda (result)
                                   (cl-decf cloudnotes-list--fetching)
                                   (cloudnotes-list--fill at (plist-get result :rows)
                                                          (plist-get result :total))
                                   (when then (funcall then)))
                           :else (lambda (err)
                                   (cl-decf cloudnotes-list--fetching)
                                   (unless (eql (plist-get err :code) -1)
                                     (cloudnotes--error "cannot list the memos: %s"
                                                        (cloudnotes--error-text err)))))
      (setq offset (+ offset n) limit (- limit n)))))

(defun cloudnotes-list--fill (from rows total)
  "Hold ROWS (a vector), rows FROM on of the list of TOTAL rows.
A response describes the list after every notification before it,
so the rows go at FROM in the list as it is now."
  (unless (eql total cloudnotes-list--total)
    (cloudnotes-list--reset total))
  (let* ((n (max 0 (min (length rows) (- total from))))
         (to (+ from n))
         (have-end (+ cloudnotes-list--offset cloudnotes-list--count)))
    (when (> n 0)
      (if (and (> cloudnotes-list--count 0) (<= from have-end) (<= cloudnotes-list--offset to))
          (setq have-end (max to have-end)
                cloudnotes-list--offset (min from cloudnotes-list--offset))
        (cloudnotes-list--blank cloudnotes-list--offset cloudnotes-list--count)
        (setq cloudnotes-list--offset from have-end to))
      (setq cloudnotes-list--count (- have-end cloudnotes-list--offset))
      (cloudnotes-list--set-lines
       from n (mapconcat #'cloudnotes-list--row-line (cl-subseq rows 0 n) "")))
    (cloudnotes-list--changed)))

(defun cloudnotes-list--trim (vs ve)
  "Drop held rows beyond `cloudnotes-list-max-rows', farthest from VS..VE."
  (let ((keep (max cloudnotes-list-max-rows (+ (- ve vs) (* 2 cloudnotes-list-prefetch))))
        (start cloudnotes-list--offset)
        (end (+ cloudnotes-list--offset cloudnotes-list--count)))
    (when (> (- end start) keep)
      (let* ((new-start (max start (min (- vs (/ (- keep (- ve vs)) 2)) (- end keep))))
             (new-end (+ new-start keep)))
        (cloudnotes-list--blank start (- new-start start))
        (cloudnotes-list--blank new-end (- end new-end))
        (setq cloudnotes-list--offset new-start cloudnotes-list--count keep)))))

(defun cloudnotes-list--refresh ()
  "Fetch the list again, from its total (used when a change did not fit)."
  (setq cloudnotes-list--total nil)
  (cloudnotes-list--fetch 0 1 (lambda () (cloudnotes-list--schedule))))

(defun cloudnotes-list--scrolled (&rest _)
  "The list window scrolled or point moved: check the rows shown."
  (when cloudnotes-list--total (cloudnotes-list--schedule)))

(defun cloudnotes-list--start ()
  "Fetch the first screen once the session started."
  (let* ((win (get-buffer-window (cloudnotes-list--buffer) t))
         (height (if win (window-body-height win) 40)))
    (cloudnotes-list--fetch 0 (+ height cloudnotes-list-prefetch))))

(add-hook 'cloudnotes--started-hook #'cloudnotes-list--start)
(add-hook 'cloudnotes--redraw-hook (lambda () (force-mode-line-update t)))

(provide 'cloudnotes-list)
;;; cloudnotes-list.el ends here
