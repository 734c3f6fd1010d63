import Foundation

/// A point in time with millisecond precision, written as ISO 8601 in UTC (`2026-01-01T09:30:00.000Z`).
///
/// Formatted with integer arithmetic: going through a floating-point `Date` loses the last millisecond.
public struct Timestamp: Hashable, Sendable, WireString, Comparable {
    /// Milliseconds since 1970-01-01T00:00:00Z.
    public var milliseconds: Int64

    public init(milliseconds: Int64) { self.milliseconds = milliseconds }

    public var date: Date { Date(timeIntervalSince1970: Double(milliseconds) / 1000) }

    public var iso8601: String {
        let (days, dayMilliseconds) = milliseconds.floorDividedBy(86_400_000)
        let (year, month, day) = Self.civilDate(daysSinceEpoch: days)
        let seconds = dayMilliseconds / 1000
        // Written digit by digit: this runs for every memo and row sent, and String(format:) is slow.
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
        func digits(_ value: Int64, _ count: Int) {
            var divisor: Int64 = 1
            for _ in 1..<count { divisor *= 10 }
            var rest = value
            while divisor > 0 {
                bytes.append(UInt8(ascii: "0") + UInt8(rest / divisor % 10))
                rest %= divisor
                divisor /= 10
            }
        }
        digits(year, 4); bytes.append(UInt8(ascii: "-"))
        digits(month, 2); bytes.append(UInt8(ascii: "-"))
        digits(day, 2); bytes.append(UInt8(ascii: "T"))
        digits(seconds / 3600, 2); bytes.append(UInt8(ascii: ":"))
        digits(seconds / 60 % 60, 2); bytes.append(UInt8(ascii: ":"))
        digits(seconds % 60, 2); bytes.append(UInt8(ascii: "."))
        digits(dayMilliseconds % 1000, 3); bytes.append(UInt8(ascii: "Z"))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Parses `YYYY-MM-DDTHH:MM:SS.mmmZ`, the form `iso8601` writes.
    public init?(iso8601 string: String) {
        let digits = string.utf8.map { Int64($0) - 48 }
        guard digits.count == 24, string.hasSuffix("Z") else { return nil }
        func number(_ range: Range<Int>) -> Int64? {
            var value: Int64 = 0
            for digit in digits[range] {
                guard (0...9).contains(digit) else { return nil }
                value = value * 10 + digit
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
              let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
              let millisecond = number(20..<23), (1...12).contains(month), (1...31).contains(day)
        else { return nil }
        let days = Self.daysSinceEpoch(year: year, month: month, day: day)
        milliseconds = ((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000 + millisecond
    }

    public var wireString: String { iso8601 }
    public static func parse(wireString string: String) -> Timestamp? { Timestamp(iso8601: string) }
    public static let wireDescription = "a timestamp like 2026-01-01T09:30:00.000Z"

    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool { lhs.milliseconds < rhs.milliseconds }

    // MARK: Proleptic Gregorian calendar (Howard Hinnant's days-from-civil algorithms)

    static func civilDate(daysSinceEpoch days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    static func daysSinceEpoch(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}

extension Int64 {
    /// Quotient and remainder rounded towards negative infinity, so times before 1970 format correctly.
    public func floorDividedBy(_ divisor: Int64) -> (Int64, Int64) {
        let remainder = self % divisor
        return remainder < 0 ? (self / divisor - 1, remainder + divisor) : (self / divisor, remainder)
    }
}
