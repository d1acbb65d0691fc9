/// A colour as a style file names it: a palette index or a 24-bit colour.
public enum TerminalColor: Sendable, Hashable {
    /// One of the 256 palette colours (0–15 are the terminal's own 16).
    case palette(UInt8)
    /// A 24-bit colour.
    case rgb(UInt8, UInt8, UInt8)

    /// The names a style file may use, with their palette index.
    public static let names: [String: UInt8] = [
        "black": 0, "red": 1, "green": 2, "yellow": 3, "blue": 4, "magenta": 5, "cyan": 6, "white": 7,
        "gray": 8, "grey": 8, "bright-red": 9, "bright-green": 10, "bright-yellow": 11, "bright-blue": 12,
        "bright-magenta": 13, "bright-cyan": 14, "bright-white": 15,
    ]

    /// Reads `#rgb`, `#rrggbb` (the Cast SDK's and CSS's hex forms), a palette index 0–255 or a name.
    ///
    /// ```swift
    /// TerminalColor(parsing: "#ff8800")  // .rgb(255, 136, 0)
    /// TerminalColor(parsing: "214")      // .palette(214)
    /// TerminalColor(parsing: "cyan")     // .palette(6)
    /// ```
    public init?(parsing text: String) {
        let text = text.lowercased()
        if let index = Self.names[text] {
            self = .palette(index)
            return
        }
        if let number = UInt8(text) {
            self = .palette(number)
            return
        }
        guard text.hasPrefix("#") else { return nil }
        let digits = Array(text.dropFirst())
        guard digits.allSatisfy(\.isHexDigit) else { return nil }
        func hex(_ characters: ArraySlice<Character>) -> UInt8? { UInt8(String(characters), radix: 16) }
        switch digits.count {
        case 3:
            guard let r = hex(digits[0...0]), let g = hex(digits[1...1]), let b = hex(digits[2...2]) else { return nil }
            self = .rgb(r * 17, g * 17, b * 17)
        case 6:
            guard let r = hex(digits[0...1]), let g = hex(digits[2...3]), let b = hex(digits[4...5]) else { return nil }
            self = .rgb(r, g, b)
        default:
            return nil
        }
    }

    /// The nearest of the 256 palette colours: the 6×6×6 cube (16–231) or the grey ramp (232–255).
    public var paletteIndex: UInt8 {
        switch self {
        case .palette(let index):
            return index
        case .rgb(let r, let g, let b):
            let levels: [Int] = [0, 95, 135, 175, 215, 255]
            func nearestLevel(_ value: UInt8) -> Int {
                levels.indices.min { abs(levels[$0] - Int(value)) < abs(levels[$1] - Int(value)) } ?? 0
            }
            let (ri, gi, bi) = (nearestLevel(r), nearestLevel(g), nearestLevel(b))
            let cube = (levels[ri], levels[gi], levels[bi])
            let average = (Int(r) + Int(g) + Int(b)) / 3
            let greyStep = max(0, min(23, (average - 8 + 5) / 10))
            let grey = 8 + greyStep * 10
            func distance(_ c: (Int, Int, Int)) -> Int {
                let dr = c.0 - Int(r), dg = c.1 - Int(g), db = c.2 - Int(b)
                return dr * dr + dg * dg + db * db
            }
            if distance((grey, grey, grey)) < distance(cube) { return UInt8(232 + greyStep) }
            return UInt8(16 + 36 * ri + 6 * gi + bi)
        }
    }
}

/// How many colours the terminal shows.
public enum ColorDepth: String, Sendable, Hashable, CaseIterable {
    /// No colour: emphasis through bold and reverse video only (`NO_COLOR`, `TERM=dumb`).
    case monochrome
    /// The 256-colour palette; 24-bit colours are mapped to the nearest entry.
    case palette256
    /// 24-bit colour (`COLORTERM=truecolor` or `24bit`).
    case truecolor

    /// The depth the environment asks for: `NO_COLOR` (non-empty) or `TERM=dumb` mean none,
    /// `COLORTERM=truecolor|24bit` means 24-bit, anything else the 256-colour palette.
    public static func detect(environment: [String: String]) -> ColorDepth {
        if let noColor = environment["NO_COLOR"], !noColor.isEmpty { return .monochrome }
        let term = environment["TERM"] ?? ""
        if term == "dumb" || term.isEmpty { return .monochrome }
        let colorTerm = (environment["COLORTERM"] ?? "").lowercased()
        if colorTerm == "truecolor" || colorTerm == "24bit" { return .truecolor }
        return .palette256
    }
}

/// How one screen cell is drawn.
public struct CellStyle: Sendable, Hashable {
    public var foreground: TerminalColor?
    public var background: TerminalColor?
    public var bold: Bool
    public var reverse: Bool
    public var underline: Bool

    public init(
        foreground: TerminalColor? = nil, background: TerminalColor? = nil, bold: Bool = false, reverse: Bool = false,
        underline: Bool = false
    ) {
        self.foreground = foreground
        self.background = background
        self.bold = bold
        self.reverse = reverse
        self.underline = underline
    }

    /// The terminal's own colours, no emphasis.
    public static let plain = CellStyle()

    /// The SGR parameters that select this style from a reset state, at `depth`.
    public func sgrParameters(depth: ColorDepth) -> [String] {
        var parameters: [String] = []
        if bold { parameters.append("1") }
        if underline { parameters.append("4") }
        if reverse { parameters.append("7") }
        func color(_ color: TerminalColor, base: Int) -> String? {
            switch depth {
            case .monochrome:
                return nil
            case .palette256:
                return "\(base);5;\(color.paletteIndex)"
            case .truecolor:
                switch color {
                case .palette(let index): return "\(base);5;\(index)"
                case .rgb(let r, let g, let b): return "\(base);2;\(r);\(g);\(b)"
                }
            }
        }
        if let foreground, let code = color(foreground, base: 38) { parameters.append(code) }
        if let background, let code = color(background, base: 48) { parameters.append(code) }
        return parameters
    }
}
