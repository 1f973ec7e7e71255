// The one convention between the package's JS classes and the wasm exports they hold: every export but a
// constructor answers its value, or its error (an `Error`) as the value (`answer` in src/wasm/mod.rs), and the JS
// class throws it. (A constructor has nothing to answer but its object: the glue throws its error.)

/** `answer` itself, or thrown when it is an `Error`. */
export function thrown(answer) {
  if (answer instanceof Error) throw answer;
  return answer;
}

/** The key of a class's `[Symbol.dispose]` (`free`), where the platform has none yet: a registered symbol. */
export const DISPOSE = Symbol.dispose ?? Symbol.for('Symbol.dispose');
