/**
 * The URL capture's public face for the login code: the pipeline and its
 * types live in ./capture/ (one small source per channel).
 */
export { UrlCapture, type CapturedUrl, type UrlSource, type RejectedHandler } from './capture/pipeline.js';
export { describeCandidate, type Candidate, type Channel } from './capture/evidence.js';
export { noSignInUrlError } from './capture/no-url-error.js';
