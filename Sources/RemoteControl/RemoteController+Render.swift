import CastModel

extension RemoteController {
    /// The frame at `now`: the expanded controller on a `width`×`height` screen, or the mini
    /// controller's one line `width` columns wide.
    public func render(width: Int, height: Int, now: Double) -> Screen {
        switch presentation {
        case .mini: renderMini(width: width, now: now)
        case .expanded: renderExpanded(width: width, height: height, now: now)
        }
    }

    /// `0:42`, `1:02:03`, or `–` for what no player can be at.
    public static func clock(_ seconds: Double?) -> String {
        guard let seconds, seconds.isFinite, seconds >= 0, seconds < 1e9 else { return "–:––" }
        let whole = Int(seconds)
        let two = { (value: Int) in value < 10 ? "0\(value)" : "\(value)" }
        return whole >= 3600
            ? "\(whole / 3600):\(two(whole / 60 % 60)):\(two(whole % 60))" : "\(whole / 60):\(two(whole % 60))"
    }

    /// The state as a symbol and a word: `▶ PLAYING`, `❚❚ PAUSED`.
    var stateLabel: (icon: String, word: String) {
        guard let state = snapshot.media?.playerState else {
            return ("■", snapshot.app == nil ? "IDLE SCREEN" : "NOTHING LOADED")
        }
        switch state {
        case .playing: return ("▶", "PLAYING")
        case .paused: return ("❚❚", "PAUSED")
        case .buffering: return ("…", "BUFFERING")
        case .loading: return ("…", "LOADING")
        case .idle: return ("■", "IDLE" + (snapshot.media?.idleReason.map { " (\($0.rawValue))" } ?? ""))
        default: return ("·", state.rawValue)
        }
    }

    var linkLabel: String? {
        switch snapshot.link {
        case .connected: nil
        case .connecting: "connecting…"
        case .reconnecting(let attempt): "disconnected, reconnecting (attempt \(attempt))…"
        case .failed(let reason): "disconnected: " + reason
        }
    }

    /// A slot's label on the bar: the key, then what it does now (`short`: the symbol alone, for narrow screens).
    func buttonLabel(_ button: RemoteButton, short: Bool = false) -> String? {
        let name: String
        switch button {
        case .none: return nil
        case .playPauseToggle: name = isPlaying ? (short ? "❚❚" : "❚❚ pause") : (short ? "▶" : "▶ play")
        case .skipPrevious: name = short ? "|◀" : "|◀ prev"
        case .skipNext: name = short ? "▶|" : "next ▶|"
        case .rewind30Seconds: name = short ? "◀◀" : "◀◀ 30s"
        case .forward30Seconds: name = short ? "▶▶" : "30s ▶▶"
        case .muteToggle: name = snapshot.volume?.muted == true ? "unmute" : "mute"
        case .closedCaptions: name = "CC"
        case .stop: name = short ? "■" : "■ stop"
        case .custom(let custom): name = custom.label
        }
        let key =
            button.key.map { key -> String in
                if case .character(let character) = key { return character == " " ? "space" : String(character) }
                return ""
            } ?? ""
        return "[\(key) \(name)]"
    }

    var volumeText: String? {
        guard let level = snapshot.volume?.level, level.isFinite, (0...1).contains(level) else { return nil }
        return "vol \(Int((level * 100).rounded()))%" + (snapshot.volume?.muted == true ? " muted" : "")
    }

    var captionsText: String? {
        guard snapshot.media != nil else { return nil }
        let active = Set(snapshot.media?.activeTrackIDs ?? [])
        let text = (snapshot.currentMedia?.tracks ?? []).filter { $0.type == .text && active.contains($0.trackID) }
        return text.isEmpty
            ? "captions off"
            : "captions " + text.map { $0.language ?? $0.name ?? "\($0.trackID)" }.joined(separator: ",")
    }

    var queueText: String? {
        guard let items = snapshot.media?.items, items.count > 1, let current = snapshot.media?.currentItemID,
            let index = items.firstIndex(where: { $0.itemID == current })
        else { return nil }
        return "\(index + 1)/\(items.count)"
    }

    // MARK: - Expanded

    func renderExpanded(width: Int, height: Int, now: Double) -> Screen {
        let colors = ScreenPalette(style, node: .expandedController, depth: depth)
        var screen = Screen(width: width, height: height, background: colors.background)
        let inner = max(1, screen.width - 4)
        // Header: device, app, stream type.
        var header = [snapshot.device, snapshot.app ?? "idle screen"]
        if let streamType = snapshot.currentMedia?.streamType { header.append(streamType.rawValue) }
        screen.put(
            Screen.truncate(header.joined(separator: " · "), to: inner), row: 0, column: 2, style: colors.heading)
        screen.put(String(repeating: "─", count: inner), row: 1, column: 2, style: colors.body)
        // Title and subtitle.
        let metadata = snapshot.currentMedia?.metadata
        let title =
            metadata?.title
            ?? snapshot.currentMedia.flatMap { $0.contentID?.split(separator: "/").last.map(String.init) }
        screen.put(
            Screen.truncate(title ?? (snapshot.app == nil ? "Nothing is casting" : "Nothing is loaded"), to: inner),
            row: 3, column: 2,
            style: colors.heading)
        let subtitle = metadata?.subtitle ?? metadata?.artist ?? metadata?.seriesTitle ?? metadata?.albumName
        if let subtitle { screen.put(Screen.truncate(subtitle, to: inner), row: 4, column: 2, style: colors.body) }
        // Progress bar with times.
        let position = snapshot.position(at: now)
        let duration = snapshot.currentMedia?.duration.flatMap { $0 > 0 && $0.isFinite ? $0 : nil }
        let left = Self.clock(position)
        let right = snapshot.currentMedia?.streamType == .live ? "LIVE" : Self.clock(duration)
        let barWidth = max(4, inner - left.count - right.count - 2)
        var column = screen.put(left + " ", row: 6, column: 2, style: colors.body)
        let filled =
            (position != nil && duration != nil)
            ? min(barWidth - 1, Int((position ?? 0) / (duration ?? 1) * Double(barWidth - 1))) : -1
        for index in 0..<barWidth {
            let (character, cellStyle) =
                index < filled ? ("━", colors.icon) : index == filled ? ("●", colors.icon) : ("─", colors.body)
            column = screen.put(character, row: 6, column: column, style: cellStyle)
        }
        screen.put(" " + right, row: 6, column: column, style: colors.body)
        // State line.
        let state = stateLabel
        column = screen.put(state.icon + " ", row: 7, column: 2, style: colors.icon)
        let details = [state.word, queueText, captionsText, volumeText].compactMap { $0 }.joined(separator: " · ")
        screen.put(Screen.truncate(details, to: inner - 3), row: 7, column: column, style: colors.body)
        // Button bar: two slots, the fixed play/pause in the centre, two slots.
        // Full labels when they fit, else symbols, else the outer slots go first.
        var short = false
        var slots = layout.expanded.map { buttonLabel($0) }
        func widthOfBar(_ labels: [String?], centre: String) -> Int {
            let sides = [
                labels.prefix(2).compactMap { $0 }.joined(separator: "  "),
                labels.dropFirst(2).compactMap { $0 }.joined(separator: "  "),
            ]
            return 2 * (sides.map(Screen.displayWidth(of:)).max() ?? 0) + Screen.displayWidth(of: centre) + 4
        }
        if widthOfBar(slots, centre: buttonLabel(.playPauseToggle) ?? "") > inner {
            short = true
            slots = layout.expanded.map { buttonLabel($0, short: true) }
        }
        let centre = buttonLabel(.playPauseToggle, short: short) ?? ""
        var dropped = 0
        while widthOfBar(slots, centre: centre) > inner, dropped < 2 {
            slots[dropped] = nil
            slots[slots.count - 1 - dropped] = nil
            dropped += 1
        }
        let leftSide = slots.prefix(2).compactMap { $0 }.joined(separator: "  ")
        let rightSide = slots.dropFirst(2).compactMap { $0 }.joined(separator: "  ")
        let centreColumn = max(2, (screen.width - Screen.displayWidth(of: centre)) / 2)
        screen.put(
            leftSide, row: 9, column: max(2, centreColumn - 2 - Screen.displayWidth(of: leftSide)), style: colors.button
        )
        screen.put(centre, row: 9, column: centreColumn, style: colors.selected)
        screen.put(rightSide, row: 9, column: centreColumn + Screen.displayWidth(of: centre) + 2, style: colors.button)
        // The lower area: a panel, or what comes next.
        let panelTop = 11
        let panelBottom = max(panelTop, screen.height - 3)
        switch panel {
        case .none:
            if let items = snapshot.media?.items, let current = snapshot.media?.currentItemID,
                let index = items.firstIndex(where: { $0.itemID == current }), index + 1 < items.count
            {
                screen.put(
                    Screen.truncate("Up next: " + Self.itemTitle(items[index + 1]), to: inner), row: panelTop,
                    column: 2, style: colors.body)
            }
        case .tracks(let selection):
            drawTracks(on: &screen, selection: selection, top: panelTop, bottom: panelBottom, width: inner)
        case .queue(let selection):
            drawQueue(
                on: &screen, selection: selection, top: panelTop, bottom: panelBottom, width: inner, colors: colors)
        case .introduction(let firstRun):
            drawIntroduction(on: &screen, firstRun: firstRun, top: 3, width: inner)
        }
        // Notice and keys.
        if let text = linkLabel ?? notice {
            screen.put(
                Screen.truncate(text, to: inner), row: screen.height - 2, column: 2,
                style: linkLabel == nil ? colors.body : colors.heading)
        }
        screen.put(Screen.truncate(keyHints, to: inner), row: screen.height - 1, column: 2, style: colors.button)
        return screen
    }

    var keyHints: String {
        switch panel {
        case .tracks: "↑/↓ choose  enter apply  esc close"
        case .queue: "↑/↓ choose  enter play  x remove  </> move  esc close"
        case .introduction: "any key to continue"
        case .none: "←/→ ±10s  0-9 jump  +/- volume  t tracks  l queue  ? keys  q quit"
        }
    }

    func drawTracks(on screen: inout Screen, selection: Int, top: Int, bottom: Int, width: Int) {
        let colors = ScreenPalette(style, node: .trackSelector, depth: depth)
        let rows = trackRows
        let active = Set(snapshot.media?.activeTrackIDs ?? [])
        let textActive = (snapshot.currentMedia?.tracks ?? []).contains {
            $0.type == .text && active.contains($0.trackID)
        }
        let visible = max(1, bottom - top)
        let first = max(0, min(selection - visible / 2, rows.count - visible))
        for (offset, index) in (first..<min(rows.count, first + visible)).enumerated() {
            let row = top + offset
            let text: String
            var cellStyle = colors.body
            switch rows[index] {
            case .heading(let title):
                text = title
                cellStyle = colors.heading
            case .textOff: text = "  " + (textActive ? "○" : "●") + " Off"
            case .text(let track), .audio(let track):
                text = "  " + (active.contains(track.trackID) ? "●" : "○") + " " + Self.trackName(track)
            case .style(let name, let value):
                let current = snapshot.currentMedia?.textTrackStyle
                text =
                    "  "
                    + (current?.fontScale == value.fontScale && current?.foregroundColor == value.foregroundColor
                        ? "●" : "○") + " " + name
            }
            if index == selection {
                screen.put(Screen.truncate(text, to: width), row: row, column: 2, style: colors.selected)
            } else {
                screen.put(Screen.truncate(text, to: width), row: row, column: 2, style: cellStyle)
            }
        }
    }

    func drawQueue(on screen: inout Screen, selection: Int, top: Int, bottom: Int, width: Int, colors: ScreenPalette) {
        let items = snapshot.media?.items ?? []
        screen.put(
            "Queue (\(items.count) item\(items.count == 1 ? "" : "s"))", row: top, column: 2, style: colors.heading)
        guard !items.isEmpty else {
            screen.put("the queue is empty", row: top + 1, column: 4, style: colors.body)
            return
        }
        let visible = max(1, bottom - top - 1)
        let first = max(0, min(selection - visible / 2, items.count - visible))
        for (offset, index) in (first..<min(items.count, first + visible)).enumerated() {
            let item = items[index]
            let marker = item.itemID == snapshot.media?.currentItemID ? "▶" : " "
            let duration = item.media?.duration.map { "  " + Self.clock($0) } ?? ""
            let text = Screen.truncate("\(marker) \(index + 1). \(Self.itemTitle(item))\(duration)", to: width)
            screen.put(
                text, row: top + 1 + offset, column: 2, style: index == selection ? colors.selected : colors.body)
        }
    }

    func drawIntroduction(on screen: inout Screen, firstRun: Bool, top: Int, width: Int) {
        let colors = ScreenPalette(style, node: .instructions, depth: depth)
        let lines = Self.introductionLines(layout: layout)
        let boxWidth = width
        let height = lines.count + 4
        for row in top..<min(screen.height - 1, top + height) {
            screen.put(String(repeating: " ", count: boxWidth), row: row, column: 2, style: colors.body)
        }
        screen.put(
            Screen.truncate(firstRun ? "Welcome to castprep remote" : "Keys", to: boxWidth - 2), row: top, column: 4,
            style: colors.heading)
        for (offset, line) in lines.enumerated() {
            screen.put(Screen.truncate(line, to: boxWidth - 4), row: top + 2 + offset, column: 4, style: colors.body)
        }
    }

    /// The keys, as the introductory overlay lists them.
    public static func introductionLines(layout: RemoteLayout) -> [String] {
        var lines = [
            "space      play / pause",
            "←/→  b/f   seek 10 s / 30 s;  0-9 jump to 0%–90%",
            "p/n        previous / next in the queue",
            "+/-  ↑/↓   volume;  m mute",
            "t  c       tracks: captions, audio, text style",
            "l          queue: play, remove, move items",
            "s          stop;  ?  these keys;  q  quit",
        ]
        let custom = layout.customButtons.sorted { $0.key < $1.key }
        for (key, button) in custom {
            lines.append("\(key)          \(button.label)")
        }
        return lines
    }

    // MARK: - Mini

    func renderMini(width: Int, now: Double) -> Screen {
        let colors = ScreenPalette(style, node: .miniController, depth: depth)
        var screen = Screen(width: width, height: 1, background: colors.background)
        if case .introduction = panel {
            let keys =
                "any key to start · space play/pause · ←/→ seek · +/- volume · m mute · c captions · p/n prev/next · q quit"
            screen.put(Screen.truncate(keys, to: screen.width), row: 0, column: 0, style: colors.heading)
            return screen
        }
        // The status keeps at least half the line: buttons are shortened, then dropped from the right.
        var labels = layout.mini.compactMap { buttonLabel($0) }
        if Screen.displayWidth(of: labels.joined(separator: " ")) > screen.width / 2 {
            labels = layout.mini.compactMap { buttonLabel($0, short: true) }
        }
        while !labels.isEmpty, Screen.displayWidth(of: labels.joined(separator: " ")) > screen.width / 2 {
            labels.removeLast()
        }
        let buttons = labels.joined(separator: " ")
        let buttonsWidth = Screen.displayWidth(of: buttons)
        let state = stateLabel
        var column = screen.put(state.icon + " ", row: 0, column: 0, style: colors.icon)
        let title =
            snapshot.currentMedia?.metadata?.title
            ?? snapshot.currentMedia?.contentID?.split(separator: "/").last.map(String.init)
        var parts: [String] = []
        if let link = linkLabel { parts.append(link) }
        parts.append(title ?? state.word)
        if snapshot.media != nil {
            parts.append(
                Self.clock(snapshot.position(at: now))
                    + (snapshot.currentMedia?.duration.map { " / " + Self.clock($0) } ?? ""))
        }
        if let volumeText { parts.append(volumeText) }
        if let notice { parts.append(notice) }
        let room = max(0, screen.width - column - buttonsWidth - 1)
        column = screen.put(
            Screen.truncate(parts.joined(separator: " · "), to: room), row: 0, column: column, style: colors.body)
        screen.put(buttons, row: 0, column: max(column + 1, screen.width - buttonsWidth), style: colors.button)
        return screen
    }
}
