/// The device chooser and the "no devices available" screen, before any device is connected.
public struct DeviceChooser: Sendable {
    /// One device or group in the list.
    public struct Entry: Sendable, Hashable {
        public var name: String
        public var model: String?
        public var address: String
        public var isGroup: Bool
        public var isDefault: Bool

        public init(name: String, model: String?, address: String, isGroup: Bool, isDefault: Bool) {
            self.name = name
            self.model = model
            self.address = address
            self.isGroup = isGroup
            self.isDefault = isDefault
        }
    }

    /// What the chooser shows.
    public enum Phase: Sendable, Hashable {
        /// Browsing.
        case searching
        /// The devices found, the selected row.
        case choosing([Entry], selection: Int)
        /// Nothing answered: what went wrong and what to try (the same advice as `castprep devices`).
        case noDevices(message: String, advice: [String])
    }

    /// What a key asks of the chooser.
    public enum Outcome: Sendable, Hashable {
        case none
        case connect(Entry)
        case searchAgain
        case quit
    }

    public var phase: Phase
    public var style: RemoteStyleSheet
    public var depth: ColorDepth

    public init(phase: Phase = .searching, style: RemoteStyleSheet = .standard, depth: ColorDepth = .monochrome) {
        self.phase = phase
        self.style = style
        self.depth = depth
    }

    /// Orders entries as the chooser lists them: the default device first, then devices, then groups, by name.
    public static func ordered(_ entries: [Entry]) -> [Entry] {
        entries.sorted { a, b in
            if a.isDefault != b.isDefault { return a.isDefault }
            if a.isGroup != b.isGroup { return !a.isGroup }
            return a.name.lowercased() < b.name.lowercased()
        }
    }

    /// Moves the selection or ends the chooser.
    public mutating func handle(_ key: Key) -> Outcome {
        switch key {
        case .interrupt, .escape, .character("q"): return .quit
        case .character("r"): return .searchAgain
        default: break
        }
        guard case .choosing(let entries, let selection) = phase, !entries.isEmpty else { return .none }
        switch key {
        case .up, .character("k"): phase = .choosing(entries, selection: max(0, selection - 1))
        case .down, .character("j"): phase = .choosing(entries, selection: min(entries.count - 1, selection + 1))
        case .enter, .character(" "): return .connect(entries[min(selection, entries.count - 1)])
        default: break
        }
        return .none
    }

    /// The frame on a `width`×`height` screen.
    public func render(width: Int, height: Int) -> Screen {
        let node: StyleNode = if case .noDevices = phase { .noDevicesAvailableController } else { .deviceChooser }
        let colors = ScreenPalette(style, node: node, depth: depth)
        var screen = Screen(width: width, height: height, background: colors.background)
        let inner = max(1, screen.width - 4)
        switch phase {
        case .searching:
            screen.put("Cast devices", row: 0, column: 2, style: colors.heading)
            screen.put(String(repeating: "─", count: inner), row: 1, column: 2, style: colors.body)
            screen.put("Looking for Cast devices on the network…", row: 3, column: 2, style: colors.body)
            screen.put(Screen.truncate("q quit", to: inner), row: screen.height - 1, column: 2, style: colors.button)
        case .choosing(let entries, let selection):
            screen.put("Cast devices (\(entries.count))", row: 0, column: 2, style: colors.heading)
            screen.put(String(repeating: "─", count: inner), row: 1, column: 2, style: colors.body)
            let nameWidth = min(
                max(12, entries.map { Screen.displayWidth(of: $0.name) + ($0.isDefault ? 10 : 0) }.max() ?? 0),
                inner / 2)
            let modelWidth = min(
                24, entries.map { Screen.displayWidth(of: $0.isGroup ? "group" : ($0.model ?? "")) }.max() ?? 0)
            let visible = max(1, screen.height - 5)
            let first = max(0, min(selection - visible / 2, entries.count - visible))
            for (offset, index) in (first..<min(entries.count, first + visible)).enumerated() {
                let entry = entries[index]
                let name = Screen.truncate(entry.name + (entry.isDefault ? " (default)" : ""), to: nameWidth)
                let padded = name + String(repeating: " ", count: max(0, nameWidth - Screen.displayWidth(of: name)))
                let kindText = Screen.truncate(entry.isGroup ? "group" : (entry.model ?? ""), to: modelWidth)
                let kind =
                    kindText + String(repeating: " ", count: max(0, modelWidth - Screen.displayWidth(of: kindText)))
                let line = Screen.truncate(
                    "\(index == selection ? "▶" : " ") \(padded)  \(kind)  \(entry.address)", to: inner)
                screen.put(line, row: 3 + offset, column: 2, style: index == selection ? colors.selected : colors.body)
            }
            screen.put(
                Screen.truncate("↑/↓ choose  enter connect  r search again  q quit", to: inner), row: screen.height - 1,
                column: 2,
                style: colors.button)
        case .noDevices(let message, let advice):
            screen.put("No Cast devices available", row: 0, column: 2, style: colors.heading)
            screen.put(String(repeating: "─", count: inner), row: 1, column: 2, style: colors.body)
            var row = 3
            for line in Self.wrap(message, width: inner) where row < screen.height - 2 {
                screen.put(line, row: row, column: 2, style: colors.body)
                row += 1
            }
            row += 1
            for item in advice {
                for (index, line) in Self.wrap(item, width: inner - 2).enumerated() where row < screen.height - 2 {
                    screen.put((index == 0 ? "• " : "  ") + line, row: row, column: 2, style: colors.body)
                    row += 1
                }
            }
            screen.put(
                Screen.truncate("r search again  q quit", to: inner), row: screen.height - 1, column: 2,
                style: colors.button)
        }
        return screen
    }

    /// `text` in lines of at most `width` columns, broken at spaces (a longer word is cut).
    public static func wrap(_ text: String, width: Int) -> [String] {
        guard width > 0 else { return [] }
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ", omittingEmptySubsequences: true).map(String.init) {
            let candidate = line.isEmpty ? word : line + " " + word
            if Screen.displayWidth(of: candidate) <= width {
                line = candidate
            } else {
                if !line.isEmpty { lines.append(line) }
                line = Screen.truncate(word, to: width)
            }
        }
        if !line.isEmpty { lines.append(line) }
        return lines
    }
}
