import CommandParsing
import Testing

@Suite("Typed option accessors")
struct TypedValueTests {
    @Test(
        "integer reads the given value or the default",
        arguments: [
            (["fetch", "u"], 3),
            (["fetch", "-c", "7", "u"], 7),
            (["fetch", "--count=10", "u"], 10),
            (["fetch", "--count", "-2", "u"], -2),
        ])
    func integers(arguments: [String], expected: Int) throws {
        let values = try SampleTool.values(arguments)
        #expect(try values.integer("count") == expected)
    }

    @Test("integer and number are nil for an option without value or default")
    func absentValues() throws {
        let values = try SampleTool.values(["fetch", "u"])
        #expect(try values.number("ratio") == nil)
        #expect(try values.integer("output") == nil)
        #expect(try values.integer("undeclared") == nil)
    }

    @Test(
        "integer rejects text and out-of-range values, naming the option and the value",
        arguments: [
            ("abc", "The value 'abc' is invalid for '--count <count>'. Expected an integer from 1 to 10"),
            ("2.5", "The value '2.5' is invalid for '--count <count>'. Expected an integer from 1 to 10"),
            ("0", "The value '0' is invalid for '--count <count>'. Expected an integer from 1 to 10"),
            ("11", "The value '11' is invalid for '--count <count>'. Expected an integer from 1 to 10"),
        ])
    func integerErrors(text: String, message: String) throws {
        let values = try SampleTool.values(["fetch", "--count", text, "u"])
        let error = try #require(throws: UsageError.self) { try values.integer("count", in: 1...10) }
        #expect(error.message == message)
        #expect(error.help == "-c, --count <count>  How many times to try.")
        #expect(error.commandPath == ["tool", "fetch"])
    }

    @Test("integer without a range only rejects text")
    func integerWithoutRange() throws {
        let values = try SampleTool.values(["fetch", "--count", "1000", "u"])
        #expect(try values.integer("count") == 1000)
        let bad = try SampleTool.values(["fetch", "--count", "ten", "u"])
        let error = try #require(throws: UsageError.self) { try bad.integer("count") }
        #expect(error.message == "The value 'ten' is invalid for '--count <count>'. Expected an integer")
    }

    @Test("number reads decimals within the range", arguments: [("0", 0.0), ("0.25", 0.25), ("1", 1.0), ("1e-1", 0.1)])
    func numbers(text: String, expected: Double) throws {
        let values = try SampleTool.values(["fetch", "--ratio", text, "u"])
        #expect(try values.number("ratio", in: 0...1) == expected)
    }

    @Test(
        "number rejects text, non-finite values and values out of range",
        arguments: [
            ("half", "The value 'half' is invalid for '--ratio <ratio>'. Expected a number from 0.0 to 1.0"),
            ("nan", "The value 'nan' is invalid for '--ratio <ratio>'. Expected a number from 0.0 to 1.0"),
            ("inf", "The value 'inf' is invalid for '--ratio <ratio>'. Expected a number from 0.0 to 1.0"),
            ("1.5", "The value '1.5' is invalid for '--ratio <ratio>'. Expected a number from 0.0 to 1.0"),
            ("-0.5", "The value '-0.5' is invalid for '--ratio <ratio>'. Expected a number from 0.0 to 1.0"),
        ])
    func numberErrors(text: String, message: String) throws {
        let values = try SampleTool.values(["fetch", "--ratio", text, "u"])
        let error = try #require(throws: UsageError.self) { try values.number("ratio", in: 0...1) }
        #expect(error.message == message)
        #expect(error.help == "-r, --ratio <ratio>  Fraction of bytes to keep.")
    }

    @Test("a range error raised in a run closure is reported with usage and exit 64")
    func rangeErrorThroughRunner() async {
        let result = await SampleTool.run(["fetch", "-c", "99", "u"])
        #expect(result.status == 64)
        #expect(result.output == "")
        #expect(
            result.error == """
                Error: The value '99' is invalid for '--count <count>'. Expected an integer from 1 to 10
                Help:  -c, --count <count>  How many times to try.

                """ + Usage.fetch)
    }

    @Test("valid typed values reach the run closure")
    func typedValuesThroughRunner() async {
        let result = await SampleTool.run(["fetch", "-c", "2", "--ratio=0.5", "a", "b"])
        #expect(result.status == 0)
        #expect(result.output == "fetch a,b count=2 ratio=0.5\n")
    }
}
