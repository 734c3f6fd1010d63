import CloudNotesProtocol
import Foundation

// MARK: - Sharing

extension SplitViewMediator {
    /// Renders a memo for a share sheet; sharing changes nothing.
    public func share(_ request: ShareRequest) throws(ResponseError) -> ShareResult {
        try translatingErrors {
            guard let stored = try store.memo(id: request.id.description) else {
                throw ResponseError.memoNotFound(request.id)
            }
            return SharedMemo(memo: presenter.memo(stored), format: request.format ?? .text).result
        }
    }
}

/// A memo rendered in one share format.
struct SharedMemo {
    let memo: Memo
    let format: ShareFormat

    var result: ShareResult {
        ShareResult(title: memo.title, text: text, mimeType: mimeType, filename: FileName.safe(memo.title) + "." + fileExtension)
    }

    var text: String {
        switch format {
        case .text:
            return memo.text
        case .markdown:
            return memo.body.isEmpty ? "# \(memo.title)\n" : "# \(memo.title)\n\n\(memo.body)"
        case .json:
            let object: JSONValue = [
                "id": .string(memo.id.description), "title": .string(memo.title), "body": .string(memo.body),
                "text": .string(memo.text), "createdAt": .string(memo.createdAt.iso8601),
                "modifiedAt": .string(memo.modifiedAt.iso8601),
            ]
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            return String(decoding: (try? encoder.encode(object)) ?? Data(), as: UTF8.self)
        }
    }

    var mimeType: String {
        switch format {
        case .text: "text/plain; charset=utf-8"
        case .markdown: "text/markdown; charset=utf-8"
        case .json: "application/json"
        }
    }

    var fileExtension: String {
        switch format {
        case .text: "txt"
        case .markdown: "md"
        case .json: "json"
        }
    }
}

/// File names made from titles.
package enum FileName {
    /// `title` as a file name: no path separators, control characters or leading dots, at most 100 characters.
    package static func safe(_ title: String) -> String {
        let forbidden = CharacterSet(charactersIn: "/\\:*?\"<>|").union(.controlCharacters)
        var name = String(String.UnicodeScalarView(title.unicodeScalars.map { forbidden.contains($0) ? "_" : $0 }))
        while name.hasPrefix(".") { name.removeFirst() }
        name = String(name.prefix(100)).trimmingCharacters(in: .whitespaces)
        return name.isEmpty ? "memo" : name
    }
}
