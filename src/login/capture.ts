/**
 * The URL capture's public face for the login code: the pipeline and its
 * types live in ./capture/ (one small source per channel).
 */

export { type Candidate, type Channel, describeCandidate } from './capture/evidence.js';
export { noSignInUrlError } from './capture/no-url-error.js';
export { type CapturedUrl, type RejectedHandler, UrlCapture, type UrlSource } from './capture/pipeline.js';
