/// Prints one line of figures per fault, collected into docs/RELIABILITY.md.
func reliabilityFigures(_ fault: String, _ figures: String) {
    print("RELIABILITY \(fault): \(figures)")
}
