import Glibc
import SystemIO
import Testing

/// Whether `descriptor` is readable right now (a zero-timeout poll).
private func isReadable(_ descriptor: Int32) -> Bool {
    var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
    return poll(&entry, 1, 0) == 1 && entry.revents & Int16(POLLIN) != 0
}

@Suite("WakePipe and Mailbox")
struct MailboxTests {
    @Test("a wake makes the pipe readable until it is drained; many wakes need one drain")
    func wakeAndDrain() throws {
        let pipe = try WakePipe()
        #expect(!isReadable(pipe.readDescriptor))
        for _ in 0..<100_000 { pipe.wake() }  // more than a pipe holds: never blocks
        #expect(isReadable(pipe.readDescriptor))
        pipe.drain()
        #expect(!isReadable(pipe.readDescriptor))
    }

    @Test("wait returns at once when a wake is pending, and after its timeout when none is")
    func wait() throws {
        let pipe = try WakePipe()
        pipe.wake()
        pipe.wait(timeout: nil)
        #expect(!isReadable(pipe.readDescriptor))
        pipe.wait(timeout: .zero)
    }

    @Test("messages arrive in order, and only the first post after a take writes a wake-up")
    func order() throws {
        let mailbox = try Mailbox<Int>()
        #expect(mailbox.take().isEmpty)
        for number in 1...5 { #expect(mailbox.post(number)) }
        #expect(isReadable(mailbox.wakeDescriptor))
        #expect(mailbox.take() == [1, 2, 3, 4, 5])
        #expect(!isReadable(mailbox.wakeDescriptor))
        mailbox.post(6)
        #expect(isReadable(mailbox.wakeDescriptor))
        #expect(mailbox.take() == [6])
    }

    @Test("a closed mailbox hands back what was queued and refuses later messages")
    func close() throws {
        let mailbox = try Mailbox<String>()
        mailbox.post("queued")
        #expect(mailbox.close() == ["queued"])
        #expect(mailbox.isClosed)
        #expect(!mailbox.post("late"))
        #expect(mailbox.take().isEmpty)
    }

    @Test("messages from many threads all reach a loop thread that polls the wake pipe")
    func manyThreads() throws {
        let mailbox = try Mailbox<Int>()
        let producers = try (0..<4).map { producer in
            try IOThread.start(named: "producer") {
                for number in 0..<1000 { mailbox.post(producer * 1000 + number) }
            }
        }
        var received: [Int] = []
        while received.count < 4000 {
            var entry = pollfd(fd: mailbox.wakeDescriptor, events: Int16(POLLIN), revents: 0)
            _ = poll(&entry, 1, 10_000)
            received += mailbox.take()
        }
        for producer in producers { producer.join() }
        #expect(Set(received) == Set(0..<4000))
        // Each producer's own messages stay in order.
        for producer in 0..<4 {
            let own = received.filter { $0 / 1000 == producer }
            #expect(own == own.sorted())
        }
    }
}
