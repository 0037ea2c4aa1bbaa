import Foundation
import XCTest

@testable import JackHost

final class SPSCRingTests: XCTestCase {
    func testCapacityRoundsUpToPowerOfTwo() {
        let ends = SPSCRing<Int>.makeRing(capacity: 5)
        let writer = ends.writer
        XCTAssertEqual(writer.ring.capacity, 8)
        XCTAssertTrue(writer.ring.testOnly_verifyInvariants())
    }

    func testEmptyRingYieldsNothing() {
        let ends = SPSCRing<Int>.makeRing(capacity: 4)
        let reader = ends.reader
        XCTAssertNil(reader.pop())
        XCTAssertNil(reader.peek())
        XCTAssertEqual(reader.availableElements, 0)
    }

    func testFullRingRefusesWithoutOverwriting() {
        let ends = SPSCRing<Int>.makeRing(capacity: 4)
        let writer = ends.writer
        let reader = ends.reader
        for value in 0..<4 { XCTAssertTrue(writer.push(value)) }
        XCTAssertFalse(writer.push(99))
        XCTAssertEqual(writer.availableSpace, 0)
        XCTAssertEqual((0..<4).map { _ in reader.pop() }, [0, 1, 2, 3])
        XCTAssertNil(reader.pop())
        XCTAssertTrue(writer.ring.testOnly_verifyInvariants())
        // Each end's cached copy of the other's index is refreshed when it says full or empty.
        XCTAssertTrue(writer.hasRoom)
        for value in 4..<8 { XCTAssertTrue(writer.push(value)) }
        XCTAssertFalse(writer.hasRoom)
        XCTAssertEqual(reader.peek(), 4)
        XCTAssertEqual(reader.pop(), 4)
        XCTAssertTrue(writer.hasRoom)
        XCTAssertTrue(writer.push(8))
        XCTAssertEqual((0..<4).map { _ in reader.pop() }, [5, 6, 7, 8])
        XCTAssertNil(reader.peek())
    }

    func testWraparoundKeepsOrder() {
        let ends = SPSCRing<Int>.makeRing(capacity: 4)
        let writer = ends.writer
        let reader = ends.reader
        var next = 0, expected = 0
        for _ in 0..<1000 {
            while writer.push(next) { next += 1 }
            XCTAssertEqual(reader.peek(), expected)
            for _ in 0..<3 {
                XCTAssertEqual(reader.pop(), expected)
                expected += 1
            }
            XCTAssertTrue(writer.ring.testOnly_verifyInvariants())
        }
        XCTAssertGreaterThan(expected, 2000)
    }

    func testConcurrentProducerAndConsumerSeeEveryValueInOrder() {
        let ends = SPSCRing<UInt64>.makeRing(capacity: 64)
        // The writer moves into a box the producer thread owns (an end cannot be copied,
        // and an escaping closure cannot capture a noncopyable value).
        final class WriterBox: @unchecked Sendable {
            let writer: SPSCRing<UInt64>.Writer
            init(_ writer: consuming SPSCRing<UInt64>.Writer) { self.writer = writer }
        }
        let box = WriterBox(ends.writer)
        let reader = ends.reader
        let total: UInt64 = 2_000_000
        let done = DispatchSemaphore(value: 0)
        let producer = Thread {
            var value: UInt64 = 0
            while value < total {
                if box.writer.push(value) { value += 1 }
            }
            done.signal()
        }
        producer.start()
        var expected: UInt64 = 0
        var outOfOrder = 0
        while expected < total {
            if let value = reader.pop() {
                if value != expected { outOfOrder += 1 }
                expected += 1
            }
        }
        done.wait()
        XCTAssertEqual(outOfOrder, 0)
        XCTAssertEqual(expected, total)
        XCTAssertNil(reader.pop())
    }
}
