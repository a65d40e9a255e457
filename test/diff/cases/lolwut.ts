/**
 * LOLWUT: the replies that do not depend on random numbers, byte for byte (the default of
 * 7.0, the version switch and its argument errors, drawings with no random part).
 */
import type { Script } from '../harness.js';

const scripts: Script[] = [
  { name: 'LOLWUT: 7.0\'s default, versions that fall back to it, errors', steps: [
    ['LOLWUT'], ['LOLWUT', '5'], ['LOLWUT', 'VERSION'], ['LOLWUT', 'version', '7'], ['LOLWUT', 'VERSION', '59'],
    ['LOLWUT', 'VERSION', '-1'], ['LOLWUT', 'VERSION', '4294967303'], ['LOLWUT', 'VERSION', 'x'], ['LOLWUT', 'VERSION', '5', 'x'],
    ['LOLWUT', 'VERSION', '6', '10', 'y'], ['LOLWUT', 'VERSION', '5', '10', '2', '99999999999999999999'],
  ] },
  { name: 'LOLWUT VERSION 5 (Schotter): the rows drawn without randomness', steps: [
    ['LOLWUT', 'VERSION', '5', '66', '8', '2'], ['LOLWUT', 'VERSION', '5', '1', '1', '1'], ['LOLWUT', 'VERSION', '5', '20', '3', '1'],
    ['LOLWUT', 'VERSION', '4', '40', '5', '2'], ['LOLWUT', 'VERSION', '5', '-5', '0', '0'], ['LOLWUT', 'VERSION', '5', '2', '300', '2'],
    ['LOLWUT', 'VERSION', '5', '3', '7', '2'], ['LOLWUT', 'VERSION', '5', '100', '13', '1'],
  ] },
  { name: 'LOLWUT VERSION 6 (skyline): canvases too small for a random part', steps: [
    ['LOLWUT', 'VERSION', '6', '1', '1'], ['LOLWUT', 'VERSION', '6', '0', '-3'], ['LOLWUT', 'VERSION', '59', '1', '1'],
  ] },
];
export default scripts;
