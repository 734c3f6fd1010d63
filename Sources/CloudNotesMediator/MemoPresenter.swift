import CloudNotesProtocol
import CloudNotesStore
import Foundation
import Synchronization

// MARK: - Presenter

/// Turns stored memos into what the panes show: dates in the client's locale and time zone, and a
/// localized placeholder for memos without a title.
public struct MemoPresenter: Sendable {
    public let locale: Locale
    public let timeZone: TimeZone
    private let dateStyle: Date.FormatStyle
    private let dateCache = DisplayDateCache()

    /// The title shown for a memo whose text has no non-blank line.
    public let placeholderTitle: String

    public init(locale: Locale = Locale(identifier: "en_US"), timeZone: TimeZone = .gmt) {
        self.locale = locale
        self.timeZone = timeZone
        var style = Date.FormatStyle(date: .long, time: .shortened, locale: locale, timeZone: timeZone)
        style.calendar = Calendar(identifier: .gregorian)
        dateStyle = style
        placeholderTitle = locale.language.languageCode?.identifier == "ko" ? "새로운 메모" : "New Memo"
    }

    /// A presenter for the `locale` and `timeZone` an `initialize` request names; nil values mean the defaults.
    public init(localeIdentifier: String?, timeZoneIdentifier: String?) throws(ResponseError) {
        var zone = TimeZone.gmt
        if let timeZoneIdentifier {
            guard let named = TimeZone(identifier: timeZoneIdentifier) else {
                throw .invalidParams(param: "timeZone", "is not an IANA time zone such as Asia/Seoul")
            }
            zone = named
        }
        self.init(locale: Locale(identifier: localeIdentifier ?? "en_US"), timeZone: zone)
    }

    /// Formats a date on a thread of its own, so that the first memo shown does not wait for it.
    ///
    /// The first date formatted in a process loads ICU's locale, calendar and time-zone data, most of it
    /// whatever the locale (so a client's Korean dates then load faster too).
    /// A server that calls this before opening its store has that work done by its first `didShow`.
    public static func loadFormattingDataInBackground() {
        Thread.detachNewThread { _ = MemoPresenter().displayDate(0) }
    }

    /// `milliseconds` as the client reads dates. Shown to the minute, so each minute is formatted once
    /// (a date formatter costs tens of microseconds, and a list page shows a hundred dates).
    public func displayDate(_ milliseconds: Int64) -> String {
        let minute = milliseconds.floorDividedBy(60_000).0
        if let cached = dateCache.string(forMinute: minute) { return cached }
        let string = Timestamp(milliseconds: minute * 60_000).date.formatted(dateStyle)
        dateCache.store(string, forMinute: minute)
        return string
    }

    public func title(_ stored: String) -> String { stored.isEmpty ? placeholderTitle : stored }

    public func memo(_ stored: StoredMemo) -> Memo {
        let derived = MemoText(stored.text)
        return Memo(
            id: MemoID(stored.id)!, text: stored.text, title: title(derived.title), body: derived.body,
            createdAt: Timestamp(milliseconds: stored.createdAt), modifiedAt: Timestamp(milliseconds: stored.modifiedAt),
            version: stored.version, displayDate: displayDate(stored.modifiedAt))
    }

    public func row(_ listed: ListedMemo) -> MemoRow {
        MemoRow(
            id: MemoID(listed.id)!, title: title(listed.title), preview: listed.preview,
            modifiedAt: Timestamp(milliseconds: listed.modifiedAt), displayDate: displayDate(listed.modifiedAt))
    }

    public func row(_ stored: StoredMemo) -> MemoRow {
        row(stored.listed)
    }
}

// MARK: - Date cache

/// Display dates by minute, bounded: cleared when it grows past `capacity`.
final class DisplayDateCache: Sendable {
    static let capacity = 4096
    private let strings = Mutex<[Int64: String]>([:])

    func string(forMinute minute: Int64) -> String? {
        strings.withLock { $0[minute] }
    }

    func store(_ string: String, forMinute minute: Int64) {
        strings.withLock { strings in
            if strings.count >= Self.capacity { strings.removeAll(keepingCapacity: true) }
            strings[minute] = string
        }
    }
}
