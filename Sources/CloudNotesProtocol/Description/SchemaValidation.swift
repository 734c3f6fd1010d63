// MARK: - Validation

extension Schema {
    /// The ways `value` departs from this schema, each as `path: problem`; empty when it conforms.
    ///
    /// Objects are closed: a member the schema does not name is a problem, so that a field added to a
    /// Swift type without a word in the description is caught.
    public func problems(with value: JSONValue, at path: String = "$", definitions: [String: Schema]) -> [String] {
        switch (self, value) {
        case (.any, _), (.null, .null), (.boolean, .bool), (.number, .number):
            return []
        case (.integer(let minimum), .number(let number)):
            if number.rounded() != number { return ["\(path): \(number) is not an integer"] }
            if let minimum, number < Double(minimum) { return ["\(path): \(number) is below \(minimum)"] }
            return []
        case (.string, .string):
            return []
        case (.enumeration(let cases), .string(let string)):
            return cases.contains(string) ? [] : ["\(path): '\(string)' is not one of \(cases)"]
        case (.array(let element), .array(let elements)):
            return elements.enumerated().flatMap {
                element.problems(with: $1, at: "\(path)[\($0)]", definitions: definitions)
            }
        case (.object(let fields), .object(let members)):
            var found: [String] = []
            for field in fields {
                if let member = members[field.name] {
                    found += field.schema.problems(with: member, at: "\(path).\(field.name)", definitions: definitions)
                } else if field.isRequired {
                    found.append("\(path).\(field.name): missing")
                }
            }
            let known = Set(fields.map(\.name))
            found += members.keys.filter { !known.contains($0) }.sorted().map { "\(path).\($0): not described" }
            return found
        case (.reference(let name), _):
            guard let definition = definitions[name] else { return ["\(path): unknown type \(name)"] }
            return definition.problems(with: value, at: path, definitions: definitions)
        case (.nullable, .null):
            return []
        case (.nullable(let wrapped), _):
            return wrapped.problems(with: value, at: path, definitions: definitions)
        case (.oneOf(let options), _):
            let matches = options.contains { $0.problems(with: value, at: path, definitions: definitions).isEmpty }
            return matches ? [] : ["\(path): matches none of the allowed shapes"]
        default:
            return ["\(path): \(value) does not match \(self)"]
        }
    }
}
