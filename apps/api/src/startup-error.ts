/** A start-up failure whose message is the one line the operator sees before the process exits. */
export class StartupError extends Error {}
