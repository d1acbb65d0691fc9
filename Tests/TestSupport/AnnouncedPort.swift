public import Foundation

extension Process {
    /// Starts the process and returns the port it prints on the first line of its standard
    /// output: for test servers that bind port 0 on loopback and say which port they got. 0
    /// when the process closed its output without printing one (it failed to start).
    ///
    /// Standard output becomes a pipe, read off the cooperative pool; set standard error before
    /// calling.
    public func runReadingAnnouncedPort() async throws -> Int {
        let output = Pipe()
        standardOutput = output
        try run()
        let line = await ChildProcess.read(output)
        return Int(line.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
    }
}
