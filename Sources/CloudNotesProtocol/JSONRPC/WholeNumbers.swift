// MARK: - Whole-number params

extension KeyedDecodingContainer {
    /// Decodes an optional integer param, refusing fractions and out-of-range numbers with an error
    /// that names the key. (Foundation's own error for `2.5` as an `Int` carries no coding path.)
    func decodeWholeNumberIfPresent<Number: FixedWidthInteger>(
        _ type: Number.Type, forKey key: Key, minimum: Number = .min
    ) throws -> Number? {
        let decoded: JSONValue?
        do {
            decoded = try decodeIfPresent(JSONValue.self, forKey: key)
        } catch {
            // Only a number beyond a double (1e400) fails to decode as any JSON value.
            throw DecodingError.dataCorrupted(
                .init(codingPath: codingPath + [key], debugDescription: "is not a whole number in range"))
        }
        guard let value = decoded else { return nil }
        guard case .number(let number) = value else {
            throw DecodingError.typeMismatch(
                Number.self, .init(codingPath: codingPath + [key], debugDescription: "expected an integer"))
        }
        guard number.rounded() == number, let whole = Number(exactly: number) else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: codingPath + [key], debugDescription: "is not a whole number in range"))
        }
        guard whole >= minimum else {
            throw DecodingError.dataCorrupted(.init(codingPath: codingPath + [key], debugDescription: "is below its minimum, \(minimum)"))
        }
        return whole
    }
}

extension KeyedDecodingContainer {
    /// Decodes a required integer param, as `decodeWholeNumberIfPresent` does an optional one.
    func decodeWholeNumber<Number: FixedWidthInteger>(_ type: Number.Type, forKey key: Key, minimum: Number = .min) throws -> Number {
        guard let number = try decodeWholeNumberIfPresent(type, forKey: key, minimum: minimum) else {
            throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "is missing"))
        }
        return number
    }
}
