// A question nobody has answered, in words, as `show` and the dashboard say it alike: pure, and without
// the schemas of questions.ts, so that the page's code can take it.

/**
 * "waiting for an answer until <answerBy>" while the dispatch can still take one (`waiting`), else that it
 * never came: the dispatch was stopped or ended first (domain/steering/questions.ts `waitsForAnswers`).
 */
export function unansweredWords(q: { waiting: boolean; answerBy: string }): string {
  return q.waiting ? `waiting for an answer until ${q.answerBy}` : "never answered: the dispatch ended first";
}
