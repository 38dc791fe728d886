/** The words of what the layers under a use case tell a person (core/io.ts, ServerNote), and how loudly. */
import type { ServerNote } from '../../core/io.js';

export interface NoteText {
  how: 'info' | 'warn' | 'verbose';
  text: string;
}

/** A `switch` with no default: a note with no words here is a tsc error. */
export function serverNoteText(note: ServerNote): NoteText {
  switch (note.about) {
    case 'output':
      return { how: 'verbose', text: `[server ${note.stream}] ${note.line}` };
    case 'protocol':
      return { how: 'verbose', text: note.text };
    case 'profile-followed':
      return {
        how: 'info',
        text: `the server is ${note.title} (agentInfo.name ${JSON.stringify(note.agentName)}): using the ${note.profile} profile, state dir ${note.stateDir} (pass --profile ${note.profile} to say so up front)`,
      };
    case 'profile-kept':
      return {
        how: 'warn',
        text: `the server reports agentInfo.name ${JSON.stringify(note.agentName)} (profile ${note.detected}), but profile ${note.asked} was asked for; following ${note.asked}`,
      };
  }
}
