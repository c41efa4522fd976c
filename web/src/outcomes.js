// outcomes: the color and the word of each outcome class the server sends
// (Okabe–Ito, a palette readable with every common color-vision deficiency).
export const outcomes = {
  enforced: { color: "#0072B2", text: "Enforced" },
  partial: { color: "#E69F00", text: "Partially enforced" },
  lost: { color: "#CC79A7", text: "Overridden" },
  conflict: { color: "#D55E00", text: "Conflicted or invalid" },
  none: { color: "#BBBBBB", text: "No policy reaches it here" },
};
