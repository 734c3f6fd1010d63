import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization

// MARK: - HTTP for the remotes

/// The HTTP requests of a remote (WebDAV, S3): one shared client, a deadline over the whole answer, the
/// requests counted, and every failure to get an answer as `SyncError.unreachable`.
final class HTTPExchange: Sendable {
    /// An answer: its status, headers and whole body.
    struct Answer {
        var status: HTTPResponseStatus
        var headers: HTTPHeaders
        var body: Data
    }

    let displayURL: String
    private let timeout: TimeAmount
    private let requests = Atomic<Int>(0)
    /// The largest file read (a segment holds at most 1 MiB of text, or one memo of at most 16 MiB).
    private static let largestAnswer = 64 << 20

    init(displayURL: String, timeout: Duration) {
        self.displayURL = displayURL
        self.timeout = .milliseconds(timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
    }

    var requestCount: Int { requests.load(ordering: .relaxed) }

    /// Sends one request; `what` names it in errors ("GET devices/…/head.json").
    func send(_ method: HTTPMethod, _ url: URL, what: String, headers: [(String, String)] = [],
              body: Data? = nil) async throws -> Answer {
        requests.add(1, ordering: .relaxed)
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body {
            request.body = .bytes(ByteBuffer(bytes: body))
            request.headers.add(name: "Content-Length", value: String(body.count))
        }
        do {
            // The deadline covers the body too: a server that stalls mid-answer must not hold a sync.
            let (prepared, timeout) = (request, timeout)
            return try await Self.withDeadline(timeout) {
                let response = try await Self.client.execute(prepared, timeout: timeout)
                let bytes = try await response.body.collect(upTo: Self.largestAnswer)
                return Answer(status: response.status, headers: response.headers, body: Data(bytes.readableBytesView))
            }
        } catch is CancellationError {
            throw SyncError.cancelled
        } catch {
            throw SyncError.unreachable("\(what) on \(displayURL) failed: \(Self.describe(error))")
        }
    }

    /// The HTTP client of every remote. A refused connection fails the request at once: the default
    /// retries it until the deadline, so an unreachable server would hold a sync for its timeout.
    private static let client: HTTPClient = {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.timeout.connect = .seconds(10)
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }()

    /// Runs `body`, giving up with a timeout once `limit` has passed.
    private static func withDeadline<T: Sendable>(_ limit: TimeAmount, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await body() }
            group.addTask {
                try await Task.sleep(for: .nanoseconds(limit.nanoseconds))
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let value = first else { throw HTTPClientError.deadlineExceeded }
            return value
        }
    }

    private static func describe(_ error: any Error) -> String {
        if let error = error as? HTTPClientError {
            switch error {
            case .deadlineExceeded, .readTimeout, .connectTimeout: return "timed out"
            case .remoteConnectionClosed: return "the connection was closed"
            default: return String(describing: error)
            }
        }
        // NIO's connection errors read "connection reset (error set): Connection refused (errno: 111)".
        if let error = error as? IOError { return String(cString: strerror(error.errnoCode)) }
        return "\(error)"
    }
}
