public import JSONSupport

// MARK: - Compact wire text written straight into bytes

/// Appends the members of one compact JSON object, in the order they are given.
///
/// The wire types below list their members in UTF-8 byte order of their keys, the order
/// ``JSONWriter`` sorts them into, so the text is ``JSONWriter/compact``'s text of their
/// `jsonValue` without building that value (a dictionary per object, then sorting its keys):
/// a 10,000-item `castprep load` spent a sixth of its time there. Keys are plain identifiers
/// that need no escaping.
struct CompactObjectWriter {
    private var isEmpty = true

    /// Starts the next member: `{` or `,`, then `"key":`.
    mutating func key(_ key: StaticString, into output: inout ByteBuffer) {
        output.appendMemberName(key, after: isEmpty ? UInt8(ascii: "{") : UInt8(ascii: ","))
        isEmpty = false
    }

    /// Ends the object (`{}` when no member was written).
    func end(into output: inout ByteBuffer) {
        if isEmpty { output.append(UInt8(ascii: "{")) }
        output.append(UInt8(ascii: "}"))
    }

    mutating func write(_ key: StaticString, _ value: String?, into output: inout ByteBuffer) {
        guard let value else { return }
        self.key(key, into: &output)
        JSONWriter.writeString(value, into: &output)
    }

    mutating func write(_ key: StaticString, _ value: Int?, into output: inout ByteBuffer) {
        guard let value else { return }
        self.key(key, into: &output)
        Self.writeInteger(Int64(value), into: &output)
    }

    mutating func write(_ key: StaticString, _ value: Double?, into output: inout ByteBuffer) {
        guard let value else { return }
        self.key(key, into: &output)
        Self.writeNumber(value, into: &output)
    }

    mutating func write(_ key: StaticString, _ value: Bool?, into output: inout ByteBuffer) {
        guard let value else { return }
        self.key(key, into: &output)
        output.append(value ? "true" : "false")
    }

    mutating func write(_ key: StaticString, _ value: JSONValue?, into output: inout ByteBuffer) {
        guard let value else { return }
        self.key(key, into: &output)
        JSONWriter.compact.write(value, into: &output)
    }

    mutating func write<V: CastVocabulary>(_ key: StaticString, _ value: V?, into output: inout ByteBuffer) {
        guard let value else { return }
        self.key(key, into: &output)
        JSONWriter.writeString(value.rawValue, into: &output)
    }

    /// A nested wire value that has no direct writer: its `jsonValue`, written as before.
    mutating func write<T: CastJSONConvertible>(_ key: StaticString, _ value: T?, into output: inout ByteBuffer) {
        guard let value else { return }
        self.key(key, into: &output)
        JSONWriter.compact.write(value.jsonValue, into: &output)
    }

    mutating func write<T: CastJSONConvertible>(_ key: StaticString, _ values: [T]?, into output: inout ByteBuffer) {
        guard let values else { return }
        self.key(key, into: &output)
        JSONWriter.compact.write(.array(values.map(\.jsonValue)), into: &output)
    }

    mutating func write(_ key: StaticString, _ values: [Int]?, into output: inout ByteBuffer) {
        guard let values else { return }
        self.key(key, into: &output)
        output.append(UInt8(ascii: "["))
        for (position, value) in values.enumerated() {
            if position > 0 { output.append(UInt8(ascii: ",")) }
            Self.writeInteger(Int64(value), into: &output)
        }
        output.append(UInt8(ascii: "]"))
    }

    mutating func write(_ key: StaticString, _ values: [String]?, into output: inout ByteBuffer) {
        guard let values else { return }
        self.key(key, into: &output)
        output.append(UInt8(ascii: "["))
        for (position, value) in values.enumerated() {
            if position > 0 { output.append(UInt8(ascii: ",")) }
            JSONWriter.writeString(value, into: &output)
        }
        output.append(UInt8(ascii: "]"))
    }

    /// The decimal digits of `value`, as `String(value)` writes them.
    static func writeInteger(_ value: Int64, into output: inout ByteBuffer) {
        if value < 0 { output.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        // 20 digits hold any UInt64.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var start = 20
            repeat {
                start -= 1
                digits[start] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude != 0
            output.append(UnsafeBufferPointer(rebasing: digits[start..<20]))
        }
    }

    /// A number as `JSONValue(value)` writes it: `null` for NaN and infinities, integral values
    /// below 1e15 without a fraction, others in the shortest form that reads back the same.
    static func writeNumber(_ value: Double, into output: inout ByteBuffer) {
        guard value.isFinite else {
            output.append("null")
            return
        }
        if value == value.rounded(), abs(value) < 1e15 {
            writeInteger(Int64(value), into: &output)
        } else {
            output.append(contentsOf: String(value))
        }
    }
}

extension LoadRequest {
    /// Appends the compact wire text of this LOAD to `output`, as
    /// ``writeCompactJSON(into:)-(ByteBuffer)`` writes it.
    public func writeCompactJSON(into output: inout [UInt8]) {
        var buffer = ByteBuffer(minimumCapacity: 1024)
        writeCompactJSON(into: &buffer)
        output.append(contentsOf: buffer)
    }

    /// Appends the compact wire text of this LOAD to `output`: the bytes of
    /// `JSONWriter.compact.write(jsonValue, into:)`, written without building `jsonValue`.
    public func writeCompactJSON(into output: inout ByteBuffer) {
        guard extraMembers.isEmpty else {
            JSONWriter.compact.write(jsonValue, into: &output)
            return
        }
        var w = CompactObjectWriter()
        w.write("activeTrackIds", activeTrackIDs, into: &output)
        w.write("autoplay", autoplay, into: &output)
        w.write("credentials", credentials, into: &output)
        w.write("credentialsType", credentialsType, into: &output)
        w.write("currentTime", currentTime, into: &output)
        w.write("customData", customData, into: &output)
        w.write("loadOptions", loadOptions, into: &output)
        // Written in place (`!` on the stored value), not bound: `if let` copied the media
        // whole, with its metadata and tracks, and destroyed the copy.
        if case .some = media {
            w.key("media", into: &output)
            media!.writeCompactJSON(into: &output)
        }
        w.write("playbackRate", playbackRate, into: &output)
        w.write("queueData", queueData, into: &output)
        w.write("requestId", requestID, into: &output)
        w.write("sessionId", sessionID, into: &output)
        w.write("type", Self.messageType, into: &output)
        w.end(into: &output)
    }
}

extension MediaInformation {
    /// Appends the compact wire text of this media information to `output`, as
    /// ``LoadRequest/writeCompactJSON(into:)`` does for a LOAD.
    public func writeCompactJSON(into output: inout ByteBuffer) {
        guard extraMembers.isEmpty else {
            JSONWriter.compact.write(jsonValue, into: &output)
            return
        }
        var w = CompactObjectWriter()
        w.write("breakClips", breakClips, into: &output)
        w.write("breaks", breaks, into: &output)
        w.write("contentId", contentID, into: &output)
        w.write("contentType", contentType, into: &output)
        w.write("contentUrl", contentURL, into: &output)
        w.write("customData", customData, into: &output)
        w.write("duration", duration, into: &output)
        w.write("entity", entity, into: &output)
        w.write("hlsSegmentFormat", hlsSegmentFormat, into: &output)
        w.write("hlsVideoSegmentFormat", hlsVideoSegmentFormat, into: &output)
        w.write("mediaCategory", mediaCategory, into: &output)
        if case .some = metadata {
            w.key("metadata", into: &output)
            metadata!.writeCompactJSON(into: &output)
        }
        w.write("startAbsoluteTime", startAbsoluteTime, into: &output)
        w.write("streamType", streamType, into: &output)
        w.write("textTrackStyle", textTrackStyle, into: &output)
        if let tracks {
            w.key("tracks", into: &output)
            output.append(UInt8(ascii: "["))
            for (position, track) in tracks.enumerated() {
                if position > 0 { output.append(UInt8(ascii: ",")) }
                track.writeCompactJSON(into: &output)
            }
            output.append(UInt8(ascii: "]"))
        }
        w.write("vmapAdsRequest", vmapAdsRequest, into: &output)
        w.end(into: &output)
    }
}

extension MediaMetadata {
    /// Appends the compact wire text of this metadata to `output`.
    public func writeCompactJSON(into output: inout ByteBuffer) {
        guard extraMembers.isEmpty else {
            JSONWriter.compact.write(jsonValue, into: &output)
            return
        }
        var w = CompactObjectWriter()
        w.write("albumArtist", albumArtist, into: &output)
        w.write("albumName", albumName, into: &output)
        w.write("artist", artist, into: &output)
        w.write("artistName", artistName, into: &output)
        w.write("bookTitle", bookTitle, into: &output)
        w.write("chapterNumber", chapterNumber, into: &output)
        w.write("chapterTitle", chapterTitle, into: &output)
        w.write("composer", composer, into: &output)
        w.write("contentRating", contentRating, into: &output)
        w.write("creationDateTime", creationDateTime, into: &output)
        w.write("discNumber", discNumber, into: &output)
        w.write("episode", episode, into: &output)
        w.write("episodeNumber", episodeNumber, into: &output)
        w.write("episodeTitle", episodeTitle, into: &output)
        w.write("height", height, into: &output)
        if let images {
            w.key("images", into: &output)
            output.append(UInt8(ascii: "["))
            for (position, image) in images.enumerated() {
                if position > 0 { output.append(UInt8(ascii: ",")) }
                image.writeCompactJSON(into: &output)
            }
            output.append(UInt8(ascii: "]"))
        }
        w.write("latitude", latitude, into: &output)
        w.write("location", location, into: &output)
        w.write("longitude", longitude, into: &output)
        w.write("metadataType", metadataType.rawValue, into: &output)
        w.write("originalAirdate", originalAirdate, into: &output)
        w.write("releaseDate", releaseDate, into: &output)
        w.write("releaseYear", releaseYear, into: &output)
        w.write("season", season, into: &output)
        w.write("seasonNumber", seasonNumber, into: &output)
        w.write("seriesTitle", seriesTitle, into: &output)
        w.write("songName", songName, into: &output)
        w.write("studio", studio, into: &output)
        w.write("subtitle", subtitle, into: &output)
        w.write("title", title, into: &output)
        w.write("trackNumber", trackNumber, into: &output)
        w.write("width", width, into: &output)
        w.end(into: &output)
    }
}

extension MediaTrack {
    /// Appends the compact wire text of this track to `output`.
    public func writeCompactJSON(into output: inout ByteBuffer) {
        guard extraMembers.isEmpty else {
            JSONWriter.compact.write(jsonValue, into: &output)
            return
        }
        var w = CompactObjectWriter()
        w.write("customData", customData, into: &output)
        w.write("language", language, into: &output)
        w.write("name", name, into: &output)
        w.write("roles", roles, into: &output)
        w.write("subtype", subtype, into: &output)
        w.write("trackContentId", trackContentID, into: &output)
        w.write("trackContentType", trackContentType, into: &output)
        if trackID != Self.missingTrackID { w.write("trackId", trackID, into: &output) }
        if !type.rawValue.isEmpty { w.write("type", type, into: &output) }
        w.end(into: &output)
    }
}

extension CastImage {
    /// Appends the compact wire text of this image to `output`.
    public func writeCompactJSON(into output: inout ByteBuffer) {
        guard extraMembers.isEmpty else {
            JSONWriter.compact.write(jsonValue, into: &output)
            return
        }
        var w = CompactObjectWriter()
        w.write("height", height, into: &output)
        w.write("url", url, into: &output)
        w.write("width", width, into: &output)
        w.end(into: &output)
    }
}
