import Foundation
import Synchronization
import Testing

@testable import CloudNotesMediator

@Suite("Read ahead")
struct ReadAheadTests {
    struct Failure: Error, Equatable { var after: Int }

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
        let made = Mutex(0)
        let ahead = ReadAhead<Int>(label: "test") {
            made.withLock { made in
                made += 1
                return made <= 5 ? made : nil
            }
        }
        var got: [Int] = []
        while let element = try ahead.next() { got.append(element) }
        #expect(got == [1, 2, 3, 4, 5])
        #expect(try ahead.next() == nil)
        #expect(made.withLock { $0 } == 6, "nothing is made after the end")
    }

    @Test("the producer's error comes after the elements made before it, at every later call too")
    func failure() throws {
        let made = Mutex(0)
        let ahead = ReadAhead<Int>(label: "test") {
            try made.withLock { made throws(Failure) in
                made += 1
                if made == 3 { throw Failure(after: 2) }
                return made
            }
        }
        #expect(try ahead.next() == 1)
        #expect(try ahead.next() == 2)
        #expect(throws: Failure(after: 2)) { try ahead.next() }
        #expect(throws: Failure(after: 2)) { try ahead.next() }
        #expect(made.withLock { $0 } == 3)
    }

    @Test("the next element is made while the consumer works, and only the next: one waits at most")
    func oneAhead() throws {
        let made = Mutex(0)
        let ahead = ReadAhead<Int>(label: "test") {
            made.withLock { made in
                made += 1
                return made
            }
        }
        #expect(try ahead.next() == 1)
        // The consumer "works" on 1: 2 gets made meanwhile, and 3 waits for 2 to be taken.
        #expect(eventually { made.withLock { $0 } == 2 })
        Thread.sleep(forTimeInterval: 0.05)
        #expect(made.withLock { $0 } == 2)
        #expect(try ahead.next() == 2)
        #expect(eventually { made.withLock { $0 } == 3 })
        ahead.stop()
    }

    @Test("stop ends the producer's thread: nothing more is made")
    func stop() throws {
        let made = Mutex(0)
        let ahead = ReadAhead<Int>(label: "test") {
            made.withLock { made in
                made += 1
                return made
            }
        }
        #expect(try ahead.next() == 1)
        #expect(eventually { made.withLock { $0 } == 2 })
        ahead.stop()
        Thread.sleep(forTimeInterval: 0.05)
        #expect(made.withLock { $0 } == 2)
    }
}
