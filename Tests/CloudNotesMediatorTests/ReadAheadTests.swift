import Dispatch
import Foundation
import Synchronization
import Testing

@testable import CloudNotesMediator

@Suite("Read ahead")
struct ReadAheadTests {
    struct Failure: Error, Equatable { var after: Int }

    /// Makes 1, 2, 3… and counts them: nil after `last`, `Failure` in place of `failing`.
    final class Producer: Sendable {
        private let made = Mutex(0)
        let last: Int?
        let failing: Int?

        init(last: Int? = nil, failing: Int? = nil) {
            self.last = last
            self.failing = failing
        }

        /// How many times `make` was called.
        var calls: Int { made.withLock { $0 } }

        func make() throws -> Int? {
            try made.withLock { made throws(Failure) in
                made += 1
                if made == failing { throw Failure(after: made - 1) }
                if let last, made > last { return nil }
                return made
            }
        }

        func readAhead() -> ReadAhead<Int> { ReadAhead(label: "test") { try self.make() } }
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

    @Test("elements come in the order made, then nil, at every later call too; the thread then ends")
    func order() throws {
        weak var weakProducer: Producer?
        func start() throws -> ReadAhead<Int> {
            let producer = Producer(last: 5)
            weakProducer = producer
            let ahead = producer.readAhead()
            var got: [Int] = []
            while let element = try ahead.next() { got.append(element) }
            #expect(got == [1, 2, 3, 4, 5])
            return ahead
        }
        let ahead = try start()
        #expect(try ahead.next() == nil)
        // The thread held the producer (its closure) until it ended: nothing is made after the end.
        #expect(eventually { weakProducer == nil })
        #expect(try ahead.next() == nil)
    }

    @Test("the producer's error comes after the elements made before it, at every later call too")
    func failure() throws {
        weak var weakProducer: Producer?
        func start() throws -> ReadAhead<Int> {
            let producer = Producer(failing: 3)
            weakProducer = producer
            let ahead = producer.readAhead()
            #expect(try ahead.next() == 1)
            #expect(try ahead.next() == 2)
            return ahead
        }
        let ahead = try start()
        #expect(throws: Failure(after: 2)) { try ahead.next() }
        #expect(eventually { weakProducer == nil })
        #expect(throws: Failure(after: 2)) { try ahead.next() }
    }

    @Test("the next element is made while the consumer works, and only the next: one waits at most")
    func oneAhead() throws {
        let producer = Producer()
        let ahead = producer.readAhead()
        #expect(try ahead.next() == 1)
        // The consumer "works" on 1: 2 gets made meanwhile, and 3 waits for 2 to be taken.
        #expect(eventually { producer.calls == 2 })
        Thread.sleep(forTimeInterval: 0.05)
        #expect(producer.calls == 2)
        #expect(try ahead.next() == 2)
        #expect(eventually { producer.calls == 3 })
        ahead.stop()
    }

    @Test("stop ends the producer's thread, drops what it made, and answers nil from then on")
    func stop() throws {
        weak var weakProducer: Producer?
        func start() throws -> ReadAhead<Int> {
            let producer = Producer()
            weakProducer = producer
            let ahead = producer.readAhead()
            #expect(try ahead.next() == 1)
            #expect(eventually { producer.calls == 2 })
            return ahead
        }
        let ahead = try start()
        ahead.stop()
        #expect(eventually { weakProducer == nil })
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
        weak var weakProducer: Producer?
        func startAndDrop() throws {
            let producer = Producer()
            weakProducer = producer
            let ahead = producer.readAhead()
            #expect(try ahead.next() == 1)
            #expect(eventually { producer.calls == 2 })
        }
        try startAndDrop()
        #expect(eventually { weakProducer == nil })
    }
}
