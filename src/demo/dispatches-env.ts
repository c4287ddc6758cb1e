/**
 * The variable through which `catherd demo` tells its simulated agent the folder of its dispatches. The
 * agent's own dispatch folder is that joined with its CATHERD_DISPATCH; it stays quiet until the
 * supervisor's stall notice appears there.
 */
export const DEMO_DISPATCHES_ENV = "CATHERD_DEMO_DISPATCHES";
