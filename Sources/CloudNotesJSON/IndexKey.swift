// MARK: - Coding keys of arrays

/// An element's place in an unkeyed container, named as Foundation's JSONEncoder and JSONDecoder name it.
package struct IndexKey: CodingKey {
    package let index: Int
    package init(index: Int) { self.index = index }
    package init?(stringValue: String) { nil }
    package init?(intValue: Int) { index = intValue }
    package var stringValue: String { "Index \(index)" }
    package var intValue: Int? { index }
}
