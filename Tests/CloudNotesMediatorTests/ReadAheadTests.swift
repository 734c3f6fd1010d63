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

    @Test("elements come in the order made, then nil, at every later call too")
    func order() throws {
        let producer = Producer(last: 5)
        let ahead = producer.readAhead()
        var got: [Int] = []
        while let element = try ahead.next() { got.append(element) }
        #expect(got == [1, 2, 3, 4, 5])
        #expect(try ahead.next() == nil)
        #expect(producer.calls == 6, "nothing is made after the end")
    }

    @Test("the producer's error comes after the elements made before it, at every later call too")
    func failure() throws {
        let producer = Producer(failing: 3)
        let ahead = producer.readAhead()
        #expect(try ahead.next() == 1)
        #expect(try ahead.next() == 2)
        #expect(throws: Failure(after: 2)) { try ahead.next() }
        #expect(throws: Failure(after: 2)) { try ahead.next() }
        #expect(producer.calls == 3)
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

    @Test("stop ends the producer's thread: nothing more is made")
    func stop() throws {
        let producer = Producer()
        let ahead = producer.readAhead()
        #expect(try ahead.next() == 1)
        #expect(eventually { producer.calls == 2 })
        ahead.stop()
        Thread.sleep(forTimeInterval: 0.05)
        #expect(producer.calls == 2)
    }
}
