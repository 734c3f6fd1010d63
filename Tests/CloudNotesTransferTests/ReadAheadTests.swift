import Dispatch
import Foundation
import Synchronization
import Testing

@testable import CloudNotesTransfer

@Suite("Read ahead")
struct ReadAheadTests {
    struct Failure: Error, Equatable { var after: Int }

    /// Makes 1, 2, 3… and counts them: nil after `last`, `Failure` in place of `failing`.
    final class Producer: Sendable {
        private let made = Mutex(0)
        private let released = Atomic(false)
        let last: Int?
        let failing: Int?

        init(last: Int? = nil, failing: Int? = nil) {
            self.last = last
            self.failing = failing
        }

        /// How many times `make` was called.
        var calls: Int { made.withLock { $0 } }

        /// Whether the read-ahead's thread let go of the closure it calls: its loop has ended.
        var threadEnded: Bool { released.load(ordering: .acquiring) }

        func make() throws -> Int? {
            try made.withLock { made throws(Failure) in
                made += 1
                if made == failing { throw Failure(after: made - 1) }
                if let last, made > last { return nil }
                return made
            }
        }

        func readAhead(depth: Int = 1) -> ReadAhead<Int> {
            let token = ReleaseToken { self.released.store(true, ordering: .releasing) }
            return ReadAhead(label: "test", depth: depth) { try withExtendedLifetime(token) { try self.make() } }
        }
    }

    /// Calls `onRelease` when the last reference to it goes.
    final class ReleaseToken: Sendable {
        let onRelease: @Sendable () -> Void
        init(_ onRelease: @escaping @Sendable () -> Void) { self.onRelease = onRelease }
        deinit { onRelease() }
    }

    /// Waits up to two seconds for `condition`.
    func eventually(_ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(2)
        while !condition() {
            if Date() > deadline { return false }
            Thread.sleep(forTimeInterval: 0.001)
        }
        return true
    }

    /// A producer and its read-ahead, once that has handed over 1 and made 2 meanwhile.
    func readAheadPastTheFirst() throws -> (Producer, ReadAhead<Int>) {
        let producer = Producer()
        let ahead = producer.readAhead()
        #expect(try ahead.next() == 1)
        #expect(eventually { producer.calls == 2 })
        return (producer, ahead)
    }

    @Test("elements come in the order made, then nil, at every later call too; the thread then ends")
    func order() throws {
        let producer = Producer(last: 5)
        let ahead = producer.readAhead()
        var got: [Int] = []
        while let element = try ahead.next() { got.append(element) }
        #expect(got == [1, 2, 3, 4, 5])
        #expect(try ahead.next() == nil)
        #expect(eventually { producer.threadEnded }, "nothing is made after the end")
        #expect(producer.calls == 6)
    }

    @Test("the producer's error comes after the elements made before it, at every later call too")
    func failure() throws {
        let producer = Producer(failing: 3)
        let ahead = producer.readAhead()
        #expect(try ahead.next() == 1)
        #expect(try ahead.next() == 2)
        #expect(throws: Failure(after: 2)) { try ahead.next() }
        #expect(eventually { producer.threadEnded })
        #expect(throws: Failure(after: 2)) { try ahead.next() }
    }

    @Test("the next element is made while the consumer works, and only the next: one waits at most")
    func oneAhead() throws {
        // The consumer "works" on 1: 2 gets made meanwhile, and 3 waits for 2 to be taken.
        let (producer, ahead) = try readAheadPastTheFirst()
        Thread.sleep(forTimeInterval: 0.05)
        #expect(producer.calls == 2)
        #expect(try ahead.next() == 2)
        #expect(eventually { producer.calls == 3 })
        ahead.stop()
    }

    @Test("deeper, as many elements as the depth are made ahead, and no more; the order and the end stay")
    func severalAhead() throws {
        let producer = Producer(last: 9)
        let ahead = producer.readAhead(depth: 3)
        #expect(eventually { producer.calls == 3 }, "made before any is taken")
        Thread.sleep(forTimeInterval: 0.05)
        #expect(producer.calls == 3)
        #expect(try ahead.next() == 1)
        #expect(eventually { producer.calls == 4 })
        Thread.sleep(forTimeInterval: 0.05)
        #expect(producer.calls == 4, "1 taken, 2, 3 and 4 wait")
        var got = [1]
        while let element = try ahead.next() { got.append(element) }
        #expect(got == Array(1...9))
        #expect(try ahead.next() == nil)
        #expect(eventually { producer.threadEnded })
    }

    @Test("deeper, an error comes after every element made before it; a stop drops all that wait")
    func severalAheadEndings() throws {
        let failing = Producer(failing: 4)
        let ahead = failing.readAhead(depth: 5)
        #expect(eventually { failing.calls == 4 }, "the error ends the making")
        #expect(try ahead.next() == 1)
        #expect(try ahead.next() == 2)
        #expect(try ahead.next() == 3)
        #expect(throws: Failure(after: 3)) { try ahead.next() }
        #expect(throws: Failure(after: 3)) { try ahead.next() }

        let stopped = Producer()
        let dropping = stopped.readAhead(depth: 4)
        #expect(eventually { stopped.calls == 4 })
        dropping.stop()
        #expect(eventually { stopped.threadEnded })
        #expect(try dropping.next() == nil, "four were made, and dropped")
    }

    @Test("stop ends the producer's thread, drops what it made, and answers nil from then on")
    func stop() throws {
        let (producer, ahead) = try readAheadPastTheFirst()
        ahead.stop()
        #expect(eventually { producer.threadEnded })
        #expect(try ahead.next() == nil, "2 was made, and dropped")
        #expect(try ahead.next() == nil)
    }

    @Test("a consumer waiting for an element is woken by a stop from elsewhere, with nil")
    func stopWakesTheConsumer() throws {
        // The element is made only once the test lets it, after the stop: the consumer waits till then.
        let release = DispatchSemaphore(value: 0)
        let ahead = ReadAhead<Int>(label: "test") {
            release.wait()
            return 1
        }
        let answer = Mutex<Int??>(nil)
        Thread.detachNewThread { answer.withLock { $0 = .some(try? ahead.next()) } }
        Thread.sleep(forTimeInterval: 0.05)
        ahead.stop()
        // A bounded wait: a consumer that stop() failed to wake would block its thread for good.
        #expect(eventually { answer.withLock { $0 != nil } })
        #expect(answer.withLock { $0 } == .some(nil))
        release.signal()
    }

    @Test("dropping the last reference stops the thread too")
    func droppingStops() throws {
        let (producer, _) = try readAheadPastTheFirst()
        #expect(eventually { producer.threadEnded })
    }

    /// The threads that let go of `Tracked` elements, in order.
    final class Releases: Sendable {
        let threads = Mutex<[pthread_t]>([])
    }

    /// Records the thread that lets go of it.
    final class Tracked: Sendable {
        let releases: Releases
        init(_ releases: Releases) { self.releases = releases }
        deinit { releases.threads.withLock { $0.append(pthread_self()) } }
    }

    @Test("an element given back is let go of on the producer's thread; once that thread has ended, by the caller")
    func givenBackOnTheProducersThread() throws {
        let releases = Releases()
        let producerThread = Mutex<pthread_t?>(nil)
        let made = Mutex(0)
        let threadEnded = Atomic(false)
        let ahead: ReadAhead<Tracked> = {
            // Held by the producer's closure alone: let go of when the producer's thread has ended.
            let token = ReleaseToken { threadEnded.store(true, ordering: .releasing) }
            return ReadAhead(label: "test") {
                withExtendedLifetime(token) {}
                producerThread.withLock { $0 = pthread_self() }
                return made.withLock { made in
                    made += 1
                    return made <= 3 ? Tracked(releases) : nil
                }
            }
        }()
        var element = try ahead.next()
        // The producer has made the second and waits for room: it takes what came back only once the
        // next call makes room, when nothing else holds the first.
        #expect(eventually { made.withLock { $0 } == 2 })
        let first = element.take()
        ahead.giveBack(try #require(first))
        _ = consume first
        element = try ahead.next()
        #expect(eventually { releases.threads.withLock { $0.count == 1 } })
        #expect(releases.threads.withLock { $0 } == [try #require(producerThread.withLock { $0 })])

        while let next = try ahead.next() { element = next }
        #expect(eventually { made.withLock { $0 } == 4 } && eventually { releases.threads.withLock { $0.count } == 2 })
        #expect(eventually { threadEnded.load(ordering: .acquiring) }, "the producer's loop has ended")
        let last = element.take()
        ahead.giveBack(try #require(last))
        _ = consume last
        #expect(releases.threads.withLock { $0.count } == 3)
        #expect(releases.threads.withLock { $0.last } == pthread_self(), "after the end, by the caller")
    }
}
