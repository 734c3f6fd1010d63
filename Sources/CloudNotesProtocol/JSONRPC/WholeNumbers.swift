// MARK: - Whole-number params

extension KeyedDecodingContainer {
    /// Decodes an optional integer param, refusing fractions and out-of-range numbers with an error
    /// that names the key. (Foundation's own error for `2.5` as an `Int` carries no coding path.)
    func decodeWholeNumberIfPresent<Number: FixedWidthInteger>(_ type: Number.Type, forKey key: Key) throws -> Number? {
        guard let value = try decodeIfPresent(JSONValue.self, forKey: key) else { return nil }
        guard case .number(let number) = value else {
            throw DecodingError.typeMismatch(
                Number.self, .init(codingPath: codingPath + [key], debugDescription: "expected an integer"))
        }
        guard number.rounded() == number, let whole = Number(exactly: number) else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: codingPath + [key], debugDescription: "is not a whole number in range"))
        }
        return whole
    }
}
