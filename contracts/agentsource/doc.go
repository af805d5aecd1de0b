// Package agentsource is the one front end for agent code: what the judge's
// lint gate reads and what the goja executors compile pass through the same
// Prepare, so the judge never accepts code an executor refuses to load, nor
// the reverse.
//
// Agent code is written as an ES module with one export:
//
//	export default async function activate(cap) { ... }
//
// goja has no modules, so Prepare rewrites the export into a plain function
// declaration inside a strict wrapper function (modules are strict), which
// returns it:
//
//	(function(){'use strict';               async function activate(cap) { ... }
//	;return activate})
//
// The words "export default" become spaces, so lines and columns stay where
// the author wrote them; an anonymous function is given the name __default.
// A declaration, unlike an assigned expression, cannot be continued by a
// following line that starts with a parenthesis.
//
// The one behaviour, in the order Prepare checks:
//
//   - code over Limits.MaxBytes is refused (TooLarge), then code whose
//     brackets, outside strings and comments, nest deeper than
//     Limits.MaxNesting (TooNested), before the parser sees it; the defaults
//     are 256 KiB and 64 levels (regular expression literals are not
//     recognised by the nesting scan; see Nesting);
//   - a single textual match of `export default [async] function [name](` is
//     rewritten and the code parsed; otherwise, or if that parse fails or
//     does not declare the function where the match stood, the export is
//     found the way the parser sees it: the first `import` keyword in real
//     code is refused (Import), an `export` keyword that does not start the
//     allowed form is refused (OtherExport), a second allowed one too
//     (SecondExport);
//   - any other parse error is refused with its line (Syntax), or as
//     UnexpectedEnd when it lies past the code's last line;
//   - code with no export is refused (NoExport), and so is code whose export
//     is not a top-level declaration (NotTopLevel), including a match inside
//     a string or comment next to a top-level function of the same name: the
//     declaration must begin where the export was written;
//   - every parse runs with source maps disabled, so a sourceMappingURL
//     comment never makes the host read a file.
//
// Refusals are *Error values carrying the Problem and the line; the judge
// words them for authors, the executors pass the package's wording on.
// What a caller refuses beyond this (the judge's lint gate refuses eval,
// Function, require, .constructor and with) is that caller's policy; what
// the executor compiles may still fail goja's compiler (a redeclared let,
// with in strict code), which the judge's load gate reports.
//
// The package imports goja's parser, ast, file and token packages only,
// never the goja runtime.
package agentsource
