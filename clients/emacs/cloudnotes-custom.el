;;; cloudnotes-custom.el --- Customization of CloudNotes  -*- lexical-binding: t; -*-

;; This file is not part of GNU Emacs.

;;; Commentary:

;; The options and faces of CloudNotes (M-x customize-group RET
;; cloudnotes): the server to run and how, the list's columns and window,
;; saving, sharing, and the faces of the list.

;;; Code:

(defgroup cloudnotes nil
  "Memo pad on the CloudNotes server."
  :group 'applications
  :prefix "cloudnotes-")

(defcustom cloudnotes-program nil
  "The `cloudnotes' program.
nil means $CLOUDNOTES_BIN if it is set, else \"cloudnotes\" on the
variable `exec-path'."
  :type '(choice (const :tag "$CLOUDNOTES_BIN, else cloudnotes" nil) file))

(defcustom cloudnotes-store nil
  "The memo store, a SQLite file.
nil means the server's default: $CLOUDNOTES_STORE, else
$XDG_DATA_HOME/cloudnotes/notes.sqlite.  The folder is made if needed."
  :type '(choice (const :tag "The server's default" nil) file))

(defcustom cloudnotes-server-args nil
  "More arguments for `cloudnotes serve', e.g. (\"--durability\" \"synced\")."
  :type '(repeat string))

(defcustom cloudnotes-log-file nil
  "File for the server's log; nil keeps it in a hidden buffer."
  :type '(choice (const :tag "A hidden buffer" nil) file))

(defcustom cloudnotes-locale nil
  "BCP 47 locale for dates and the placeholder title, such as \"ko-KR\".
nil means from $LC_ALL, $LC_TIME or $LANG."
  :type '(choice (const :tag "From the environment" nil) string))

(defcustom cloudnotes-time-zone nil
  "IANA time zone for dates, such as \"Asia/Seoul\".
nil means from $TZ, /etc/timezone or /etc/localtime, else UTC."
  :type '(choice (const :tag "From the system" nil) string))

(defcustom cloudnotes-debounce 0.3
  "Seconds of pause in typing after which the change is sent."
  :type 'number)

(defcustom cloudnotes-save-max-delay 2.0
  "Most seconds typed text waits before it is sent, even while you type."
  :type 'number)

(defcustom cloudnotes-list-width nil
  "Columns of the list window; nil means half the frame, 40 to 80."
  :type '(choice (const :tag "Half the frame" nil) integer))

(defcustom cloudnotes-title-width 20
  "Columns for the title in a list row."
  :type 'integer)

(defcustom cloudnotes-date-width 30
  "Columns for the date in a list row; 0 hides the date."
  :type 'integer)

(defcustom cloudnotes-list-prefetch 10
  "Rows fetched beyond the visible part of the list, above and below."
  :type 'integer)

(defcustom cloudnotes-list-max-rows 300
  "Most rows of the list kept in memory; the others are fetched when shown."
  :type 'integer)

(defcustom cloudnotes-search-as-you-type t
  "Non-nil means the list filters while the search query is typed."
  :type 'boolean)

(defcustom cloudnotes-share-format "text"
  "Default format of `cloudnotes-share'."
  :type '(choice (const "text") (const "markdown") (const "json")))

(defcustom cloudnotes-share-action 'both
  "What `cloudnotes-share' does with the result."
  :type '(choice (const :tag "Copy it to the kill ring" copy)
                 (const :tag "Show it in a buffer" show)
                 (const :tag "Both" both)))

(defcustom cloudnotes-confirm-delete t
  "Non-nil means ask before deleting a memo."
  :type 'boolean)

(defcustom cloudnotes-focus-on-create t
  "Non-nil means a new memo's window is selected, to type at once."
  :type 'boolean)

(defcustom cloudnotes-request-timeout 30
  "Seconds to wait for the answer to an interactive request."
  :type 'number)

(defcustom cloudnotes-events-buffer-size 0
  "Size of the JSON-RPC events buffer; 0 logs nothing, nil without limit.
Set it to nil to debug: \\[cloudnotes-events] shows the buffer."
  :type '(choice (const :tag "No limit" nil) integer))

(defface cloudnotes-title '((t :inherit bold))
  "Face of memo titles in the list.")
(defface cloudnotes-date '((t :inherit shadow))
  "Face of dates in the list.")
(defface cloudnotes-preview '((t :inherit default))
  "Face of previews in the list.")
(defface cloudnotes-selected '((t :inherit highlight :extend t))
  "Face of the selected memo's row.")

(provide 'cloudnotes-custom)
;;; cloudnotes-custom.el ends here
