/// One frame: a grid of cells, each a character and its style.
///
/// Views draw into a screen; ``text`` is what a person (or `tmux capture-pane`) reads, and
/// ``TerminalRenderer`` turns the difference between two frames into escape sequences.
public struct Screen: Sendable, Hashable {
    /// One cell. A double-width character fills its cell and marks the next as its continuation.
    public struct Cell: Sendable, Hashable {
        public var character: Character
        public var style: CellStyle
        public var isContinuation: Bool

        public init(character: Character = " ", style: CellStyle = .plain, isContinuation: Bool = false) {
            self.character = character
            self.style = style
            self.isContinuation = isContinuation
        }
    }

    public let width: Int
    public let height: Int
    public private(set) var rows: [[Cell]]

    /// The largest screen drawn; terminals report larger sizes only by mistake.
    public static let maximumSide = 1000

    /// A blank screen filled with `background`.
    public init(width: Int, height: Int, background: TerminalColor? = nil) {
        self.width = max(1, min(width, Self.maximumSide))
        self.height = max(1, min(height, Self.maximumSide))
        rows = Array(
            repeating: Array(repeating: Cell(style: CellStyle(background: background)), count: self.width),
            count: self.height)
    }

    /// Writes `text` at (`row`, `column`), cut at the right edge (or at `limit` columns);
    /// control characters become spaces. Returns the column after the last cell written.
    @discardableResult
    public mutating func put(_ text: String, row: Int, column: Int, style: CellStyle = .plain, limit: Int? = nil) -> Int
    {
        guard row >= 0, row < height else { return column }
        let end = min(width, limit.map { column + max(0, $0) } ?? width)
        var x = column
        for character in text {
            let cellWidth = Self.displayWidth(of: character)
            if x < 0 {
                x += cellWidth
                continue
            }
            guard x + cellWidth <= end else { break }
            let shown: Character =
                character.unicodeScalars.allSatisfy({
                    $0.value >= 0x20 && $0.value != 0x7F && !(0x80..<0xA0).contains($0.value)
                })
                ? character : " "
            rows[row][x] = Cell(character: shown, style: style)
            if cellWidth == 2 { rows[row][x + 1] = Cell(character: " ", style: style, isContinuation: true) }
            x += cellWidth
        }
        return x
    }

    /// Sets the style of `count` cells from (`row`, `column`) without changing their characters.
    public mutating func restyle(row: Int, column: Int, count: Int, style: CellStyle) {
        guard row >= 0, row < height else { return }
        for x in max(0, column)..<max(max(0, column), min(width, column + count)) { rows[row][x].style = style }
    }

    /// The text of each row, trailing spaces removed, rows joined by newlines (trailing empty rows kept
    /// out) — the same as `tmux capture-pane -p` prints.
    public var text: String {
        var lines = rows.map { row in
            var line = ""
            for cell in row where !cell.isContinuation { line.append(cell.character) }
            while line.last == " " { line.removeLast() }
            return line
        }
        while lines.last == "" { lines.removeLast() }
        return lines.joined(separator: "\n")
    }

    /// How many columns `text` takes.
    public static func displayWidth(of text: String) -> Int { text.reduce(0) { $0 + displayWidth(of: $1) } }

    /// 2 for East Asian wide and full-width characters and most emoji, else 1.
    public static func displayWidth(of character: Character) -> Int {
        guard let scalar = character.unicodeScalars.first?.value else { return 1 }
        let wide: [ClosedRange<UInt32>] = [
            0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF,
            0xAC00...0xD7A3,
            0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x1F300...0x1F64F, 0x1F900...0x1F9FF,
            0x20000...0x3FFFD,
        ]
        return wide.contains { $0.contains(scalar) } ? 2 : 1
    }

    /// `text` cut to `width` columns, ending with "…" when cut.
    public static func truncate(_ text: String, to width: Int) -> String {
        guard width > 0 else { return "" }
        guard displayWidth(of: text) > width else { return text }
        var result = ""
        var used = 0
        for character in text {
            let next = displayWidth(of: character)
            if used + next > width - 1 { break }
            result.append(character)
            used += next
        }
        return result + "…"
    }
}

/// Draws frames on a terminal: the first frame whole, then only the cells that changed.
///
/// Output is a string of escape sequences (CSI cursor moves, SGR styles); `depth` decides how
/// colours are written (none, the 256-colour palette, or 24-bit).
public struct TerminalRenderer: Sendable {
    public let depth: ColorDepth
    private var previous: Screen?

    public init(depth: ColorDepth) { self.depth = depth }

    /// Forgets the last frame, so the next one is drawn whole (after a resize or an overlay of other output).
    public mutating func invalidate() { previous = nil }

    /// The bytes that turn the terminal's last frame into `screen`.
    public mutating func frame(_ screen: Screen) -> String {
        var output = ""
        let full = previous.map { $0.width != screen.width || $0.height != screen.height } ?? true
        if full { output += "\u{1B}[0m\u{1B}[H\u{1B}[2J" }
        for row in 0..<screen.height {
            let cells = screen.rows[row]
            var first = 0
            var last = cells.count - 1
            if !full, let previous {
                let old = previous.rows[row]
                while first < cells.count, cells[first] == old[first] { first += 1 }
                guard first < cells.count else { continue }
                while last > first, cells[last] == old[last] { last -= 1 }
            }
            // A continuation cell is drawn by the wide character before it.
            while first > 0, cells[first].isContinuation { first -= 1 }
            output += "\u{1B}[\(row + 1);\(first + 1)H"
            output += span(cells[first...last])
        }
        output += "\u{1B}[0m"
        previous = screen
        return output
    }

    /// One line for the mini controller: carriage return, the cells, erase to the end of the line.
    public func line(_ screen: Screen) -> String {
        "\r" + span(screen.rows[0][...]) + "\u{1B}[0m\u{1B}[K"
    }

    func span(_ cells: ArraySlice<Screen.Cell>) -> String {
        var output = ""
        var current: CellStyle?
        for cell in cells where !cell.isContinuation {
            if cell.style != current {
                let parameters = cell.style.sgrParameters(depth: depth)
                output += "\u{1B}[" + (["0"] + parameters).joined(separator: ";") + "m"
                current = cell.style
            }
            output.append(cell.character)
        }
        return output
    }

    /// Enters the alternate screen and hides the cursor.
    public static let enterFullScreen = "\u{1B}[?1049h\u{1B}[?25l"
    /// Resets styles, shows the cursor and leaves the alternate screen.
    public static let leaveFullScreen = "\u{1B}[0m\u{1B}[?25h\u{1B}[?1049l"
}
