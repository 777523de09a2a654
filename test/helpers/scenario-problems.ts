import { parseScenario, ScenarioFileError } from '../../src/scenarios/load.js';

/** The problems a scenario file is refused with; fails the test if it is accepted. */
export function problemsOf(yaml: string): string[] {
  try {
    parseScenario(yaml, 'bad.yaml');
  } catch (error) {
    if (error instanceof ScenarioFileError) return error.problems;
    throw error;
  }
  throw new Error('expected the scenario to be refused');
}
