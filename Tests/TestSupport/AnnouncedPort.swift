public import Foundation

extension Process {
    /// Starts the process and returns the port it prints on the first line of its standard
    /// output: for test servers that bind port 0 on loopback and say which port they got. 0
    /// when the process closed its output without printing one (it failed to start).
    ///
    /// Standard output becomes a pipe; set standard error before calling.
    public func runReadingAnnouncedPort() throws -> Int {
        let output = Pipe()
        standardOutput = output
        try run()
        var line = Data()
        while !line.contains(0x0A) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        return Int(String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
    }
}
