/** Every implementation file, imported for its registrations. */
import "./core.ts";
