import CloudNotesJSON
import CloudNotesProtocol
import CloudNotesTransport
import Foundation
import Logging
import MCP
import Synchronization

// MARK: - The wire, vetted

/// The MCP SDK's transport over stdin and stdout, with `serve`'s checks made on every message first.
///
/// So bad input gets the precise JSON-RPC error `serve` would send. The SDK alone answers a line that
/// is not JSON with a random id instead of null, accepts batches (which MCP 2025-06-18 removed),
/// answers params it cannot decode with -32603, and leaves a request before `initialize` unanswered.
/// Here each frame is checked by `MessageDecoder.check` (UTF-8, syntax, nesting, envelope), and the
/// params of the methods the server has by `ParamsCheck`; only messages that pass reach the SDK, and
/// the others are answered here. Replies go out through `MessageWriter`, so the SDK's messages and
/// these never interleave within a line.
actor VettedTransport: Transport {
    nonisolated let logger: Logger
    private nonisolated let reader: MessageReader
    private nonisolated let writer: MessageWriter
    private nonisolated let decoder: MessageDecoder
    private nonisolated let messages: AsyncThrowingStream<Data, any Error>
    private nonisolated let continuation: AsyncThrowingStream<Data, any Error>.Continuation
    /// Whether a good `initialize` went to the SDK: until then only it and `ping` may.
    private nonisolated let initialized = Atomic(false)
    /// The requests handed to the SDK and not answered yet, and whether input ended.
    private nonisolated let pending = Mutex(Pending())

    /// What is still to answer when input ends: the SDK stops reading at the end of its stream and
    /// leaves the requests it is running unanswered, so the stream ends only once they are answered,
    /// as `serve` answers what it read before it exits.
    private struct Pending {
        var requests = 0
        var inputEnded = false
        var isDone: Bool { inputEnded && requests <= 0 }
    }

    /// The longest input's end waits for answers: a request the client cancelled gets none.
    private static let answersAwaited: DispatchTimeInterval = .seconds(5)

    init(input: Int32, output: Int32, limits: InitializeResult.Limits, logger: Logger) {
        self.logger = logger
        reader = MessageReader(fileDescriptor: input, maxMessageBytes: limits.maxMessageBytes)
        writer = MessageWriter(fileDescriptor: output)
        decoder = MessageDecoder(maxNestingDepth: limits.maxNestingDepth)
        (messages, continuation) = AsyncThrowingStream.makeStream()
    }

    func connect() async throws {
        reader.start(
            onFraming: { [writer] in writer.use($0) },
            onFrame: { [self] frame in vet(frame) },
            onEnd: { [self] in endOfInput() })
    }

    func disconnect() async {
        continuation.finish()
    }

    func send(_ data: Data) async throws {
        writer.sendEncoded(LiteralStrings.restore(data))
        // The SDK sorts keys, so a response begins with its error or id, and a notification with `jsonrpc`.
        guard data.starts(with: Data(#"{"error""#.utf8)) || data.starts(with: Data(#"{"id""#.utf8)) else { return }
        if pending.withLock({ $0.requests -= 1; return $0.isDone }) { continuation.finish() }
    }

    private nonisolated func endOfInput() {
        if pending.withLock({ $0.inputEnded = true; return $0.isDone }) {
            continuation.finish()
        } else {
            DispatchQueue.global().asyncAfter(deadline: .now() + Self.answersAwaited) { [continuation] in continuation.finish() }
        }
    }

    func receive() -> AsyncThrowingStream<Data, any Error> {
        messages
    }

    /// Hands a good message to the SDK, or answers a bad one; on the reader's thread.
    private nonisolated func vet(_ frame: Frame) {
        switch decoder.check(frame) {
        case .ignored:
            return
        case .invalid(let id, let error):
            writer.sendError(error, id: id)
        case .notification(_, _, let message):
            // Before `initialize`, the SDK would answer a notification (with a made-up id); nothing may.
            guard initialized.load(ordering: .acquiring) else { return }
            continuation.yield(message)
        case .request(let id, let method, let params, let message):
            if !initialized.load(ordering: .acquiring), method != Initialize.name, method != Ping.name {
                // The SDK's own check drops the request without an answer.
                writer.sendError(.invalidRequest("the server is not initialized: send initialize first"), id: id)
            } else if let error = ParamsCheck.problem(method: method, params: params) {
                writer.sendError(error, id: id)
            } else {
                if method == Initialize.name { initialized.store(true, ordering: .releasing) }
                pending.withLock { $0.requests += 1 }
                let wrapped = method == CallTool.name ? params.flatMap { RawArguments.handingOn(message, params: $0) } : nil
                continuation.yield(wrapped ?? message)
            }
        }
    }
}

// MARK: - Params

/// The params of the MCP methods the server has, checked as the SDK will decode them, so that a bad
/// one is refused with -32602 naming it (the SDK would answer -32603).
enum ParamsCheck {
    private static let types: [String: any (Decodable & Sendable).Type] = [
        Initialize.name: Initialize.Parameters.self,
        ListTools.name: ListTools.Parameters.self,
        CallTool.name: CallTool.Parameters.self,
        ListResources.name: ListResources.Parameters.self,
        ListResourceTemplates.name: ListResourceTemplates.Parameters.self,
        ReadResource.name: ReadResource.Parameters.self,
        ResourceSubscribe.name: ResourceSubscribe.Parameters.self,
        ResourceUnsubscribe.name: ResourceUnsubscribe.Parameters.self,
    ]

    /// Why `params` cannot be the params of `method`, or nil when they can (or the SDK answers the
    /// method itself: `ping`, and the methods it does not know, with -32601).
    static func problem(method: String, params: Data?) -> ResponseError? {
        guard let type = types[method] else { return nil }
        // The params' slice starts at their value: an object starts with its brace.
        let json = params ?? Data("{}".utf8)
        guard json.first == UInt8(ascii: "{") else { return .invalidParams(param: nil, "MCP params are a JSON object") }
        do {
            _ = try JSONDecoder().decode(type, from: json)
            return nil
        } catch let error as DecodingError {
            return .invalidParams(from: error)
        } catch {
            return .invalidParams(param: nil, String(describing: error))
        }
    }
}

// MARK: - Tool arguments, as they came

/// The JSON text of a `tools/call`'s arguments, handed to the tools as it came.
///
/// The SDK reads arguments as its `Value`, which takes a string that reads as a data URL
/// (`data:,Hello`) for bytes and writes it back base64-encoded: a memo whose text is a data URL would
/// change. So the transport replaces the arguments with one member that holds their JSON text as a
/// string (which starts with `{`, so is no data URL), and the tools read that with the decoder `serve`
/// uses. The client's `_meta` stays as it was.
enum RawArguments {
    /// The one member of the arguments the SDK is handed.
    static let key = "cloudnotes/arguments"

    /// The message with its params' `arguments` wrapped; nil when it has none.
    static func handingOn(_ message: Data, params: Data) -> Data? {
        guard case .object(let members) = JSONSyntax.check(params, maxDepth: .max) else { return nil }
        let base = params.startIndex
        // The first member of a name counts, as in Foundation's decoder; names are compared decoded.
        guard let arguments = members.first(where: { member in
            let name = params[(base + member.name.lowerBound)..<(base + member.name.upperBound)]
            return (try? JSONDecoder().decode(String.self, from: name)) == "arguments"
        }) else { return nil }
        let value = (base + arguments.value.lowerBound)..<(base + arguments.value.upperBound)
        guard let quoted = try? JSONEncoder().encode(String(decoding: params[value], as: UTF8.self)) else { return nil }
        var wrapped = Data(#"{"\#(key)":"#.utf8)
        wrapped += quoted
        wrapped += Data("}".utf8)
        // `params` is a slice of `message`: its indexes are the message's.
        var result = message
        result.replaceSubrange(value, with: wrapped)
        return result
    }

    /// The arguments of a call, as `handingOn` wrapped them; none when they were absent or null.
    static func of(_ call: CallTool.Parameters) throws(ResponseError) -> [String: JSONValue] {
        guard let text = call.arguments?[key]?.stringValue, text != "null" else { return [:] }
        do {
            return try JSONDecoding.decode([String: JSONValue].self, from: Data(text.utf8))
        } catch {
            throw .invalidParams(param: "arguments", "must be an object of JSON values: \(error)")
        }
    }
}
