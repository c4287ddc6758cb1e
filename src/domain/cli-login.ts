// Where an agent CLI keeps its login (specs/placement.md, "Readiness on the host"): the files its own
// login writes and the variables that log it in without one. Each backend module says its own; `doctor`
// and a dispatch placed on another host look for them there. Pure.

/** A login file: `path` in the folder `variable` names where it is set, else `underHome` in HOME. */
export interface LoginFile {
  variable: string;
  path: string;
  underHome: string;
}

/** A CLI's logins: any one file that exists and is not empty, or any one variable set, logs it in. */
export interface CliLogin {
  files: readonly LoginFile[];
  variables: readonly string[];
}
